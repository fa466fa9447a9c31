import { useState } from 'preact/hooks';
import { ApiError, describe } from './api';
import { Dialog, Field } from './dialog';
import { Buttons, capitalised, FormError, useSubmission } from './forms';
import { call } from './session';
import { USERNAME_PATTERN, USERNAME_RULE as RULE } from '../../src/shared/names';

export const USERNAME_RULE = capitalised(RULE);
/** The password rules in a sentence (the API checks them and names the one broken). */
export const PASSWORD_RULE = 'At least 12 characters (at most 72 bytes), not a common or breached password, not one character repeated.';

/** What is wrong with a username as typed, or undefined. */
export function usernameProblem(value: string): string | undefined {
  if (value === '') return 'Required.';
  return USERNAME_PATTERN.test(value) ? undefined : `Must be ${RULE}.`;
}

/** A password input that password managers recognise, never echoed anywhere but the field. */
export function PasswordField(props: { label: string; value: string; onInput: (value: string) => void; error?: string; hint?: string; autofocus?: boolean; current?: boolean }) {
  return (
    <Field label={props.label} error={props.error} hint={props.hint}>
      {({ id, describedBy }) => (
        <input
          id={id}
          type="password"
          autofocus={props.autofocus}
          autocomplete={props.current ? 'current-password' : 'new-password'}
          spellcheck={false}
          aria-describedby={describedBy}
          aria-invalid={props.error ? true : undefined}
          value={props.value}
          onInput={(e) => props.onInput(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

type Errors = Partial<Record<'current_password' | 'new_password' | 'form', string>>;

/** A wrong current password beside its field; a rule beside the field it names; the rest above the buttons. */
function errorsOf(err: unknown): Errors {
  if (err instanceof ApiError) {
    if (err.status === 401) return { current_password: 'The current password is wrong.' };
    if (err.status === 400 && (err.field === 'current_password' || err.field === 'new_password')) return { [err.field]: `${capitalised(err.message)}.` };
  }
  return { form: describe(err) };
}

/** The signed-in user's own password: every other session of theirs ends, this one stays. */
export function ChangePasswordDialog(props: { onClose: () => void; onChanged: () => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const { errors, busy, submitting } = useSubmission<Errors>(errorsOf, {});

  const submit = async (event: Event) => {
    event.preventDefault();
    await submitting(async () => {
      // A wrong current password is this call's own 401, not the end of the session.
      await call('PUT', '/api/v1/me/password', { current_password: current, new_password: next }, { ownRefusal: true });
      props.onChanged();
    });
  };

  return (
    <Dialog title="Change password" onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <PasswordField label="Current password" value={current} onInput={setCurrent} error={errors.current_password} autofocus current />
        <PasswordField label="New password" value={next} onInput={setNext} error={errors.new_password} hint={PASSWORD_RULE} />
        <p class="muted">Your other sessions end; this one stays signed in.</p>
        <FormError message={errors.form} />
        <Buttons action="Change password" busy={busy} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

/** A secret shown this once (a generated password), with Copy; closing the dialog forgets it. */
export function ShownOnceDialog(props: { title: string; label: string; secret: string; onClose: () => void }) {
  const [copied, setCopied] = useState<string>();

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied(`Copying was refused by the browser: select the ${props.label.toLowerCase()} and copy it yourself.`);
    }
  };

  return (
    <Dialog title={props.title} onClose={props.onClose} wide>
      <p class="banner banner-warning">Copy the {props.label.toLowerCase()} now and hand it over safely: it will not be shown again.</p>
      <Field label={props.label}>
        {({ id }) => (
          <div class="copy-row">
            <input id={id} class="mono" readOnly value={props.secret} onFocus={(e) => e.currentTarget.select()} spellcheck={false} autocomplete="off" />
            <button type="button" class="button button-primary" onClick={copy} autofocus>
              Copy
            </button>
          </div>
        )}
      </Field>
      <p class="muted" role="status">
        {copied}
      </p>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={props.onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
