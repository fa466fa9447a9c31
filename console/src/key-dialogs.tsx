import { useState } from 'preact/hooks';
import { ApiError, describe, type ApiKey, type Role, type RoleOption } from './api';
import { RoleSelect } from './role-select';
import { Buttons, capitalised, FormError, useSubmission } from './forms';
import { Dialog, Field } from './dialog';
import { appnameProblem, APPNAME_RULE } from './format';
import { call, type User } from './session';

const KEYS = '/api/v1/api-keys';
const keyPath = (appname: string) => `${KEYS}/${encodeURIComponent(appname)}`;
const MAX_GRACE_SECONDS = 604_800;

type Errors = Partial<Record<'appname' | 'description' | 'roles' | 'grace_seconds' | 'form', string>>;

/** Places a refusal: beside the field a 400 names, beside Appname for a 409, else above the buttons. */
function errorsOf(err: unknown, conflictField?: 'appname'): Errors {
  if (err instanceof ApiError) {
    if (err.status === 409 && conflictField) return { [conflictField]: err.message };
    if (err.status === 400 && err.field && ['appname', 'description', 'roles', 'grace_seconds'].includes(err.field)) return { [err.field]: `${capitalised(err.message)}.` };
  }
  return { form: describe(err) };
}

const rolesOf = (option: RoleOption): Role[] => (option === 'none' ? [] : [option]);
const optionOf = (key: ApiKey): RoleOption => key.roles[0] ?? 'none';

function KeyRoleSelect(props: { user: User; value: RoleOption; onChange: (value: RoleOption) => void; error?: string }) {
  return <RoleSelect {...props} adminAllowed={props.user.role === 'admin'} whyNoAdmin="Only admins can give a key the admin role." />;
}

function DescriptionField(props: { value: string; onInput: (value: string) => void; error?: string }) {
  return (
    <Field label="Description" error={props.error}>
      {({ id, describedBy }) => (
        <textarea id={id} rows={3} maxLength={1024} aria-describedby={describedBy} aria-invalid={props.error ? true : undefined} value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />
      )}
    </Field>
  );
}

/** A key with its new appkey, as create and regenerate answer. */
export type KeyWithSecret = ApiKey & { appkey: string };

export function CreateKeyDialog(props: { user: User; onClose: () => void; onCreated: (key: KeyWithSecret) => void }) {
  const [appname, setAppname] = useState('');
  const [touched, setTouched] = useState(false);
  const [description, setDescription] = useState('');
  const [role, setRole] = useState<RoleOption>('none');
  const { errors, setErrors, busy, submitting } = useSubmission<Errors>((err) => errorsOf(err, 'appname'), {});
  const appnameError = errors.appname ?? (touched ? appnameProblem(appname) : undefined);

  const submit = async (event: Event) => {
    event.preventDefault();
    setTouched(true);
    if (appnameProblem(appname)) return;
    await submitting(async () => {
      const created = await call<{ data: KeyWithSecret }>('POST', KEYS, { appname, description, roles: rolesOf(role) });
      props.onCreated(created.data);
    });
  };

  return (
    <Dialog title="Create key" onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="Appname" error={appnameError} hint={`${capitalised(APPNAME_RULE)}. It cannot be changed later.`}>
          {({ id, describedBy }) => (
            <input
              id={id}
              autofocus
              autocomplete="off"
              spellcheck={false}
              aria-describedby={describedBy}
              aria-invalid={appnameError ? true : undefined}
              value={appname}
              onInput={(e) => {
                setAppname(e.currentTarget.value);
                setTouched(true);
                setErrors((current) => ({ ...current, appname: undefined }));
              }}
            />
          )}
        </Field>
        <DescriptionField value={description} onInput={setDescription} error={errors.description} />
        <KeyRoleSelect user={props.user} value={role} onChange={setRole} error={errors.roles} />
        <FormError message={errors.form} />
        <Buttons action="Create" busy={busy} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

export function EditKeyDialog(props: { user: User; apiKey: ApiKey; onClose: () => void; onSaved: (key: ApiKey) => void }) {
  const [description, setDescription] = useState(props.apiKey.description);
  const [role, setRole] = useState<RoleOption>(optionOf(props.apiKey));
  const { errors, busy, submitting } = useSubmission<Errors>(errorsOf, {});

  const submit = async (event: Event) => {
    event.preventDefault();
    await submitting(async () => {
      // PUT replaces the record: both fields go, changed or not.
      const saved = await call<{ data: ApiKey }>('PUT', keyPath(props.apiKey.appname), { description, roles: rolesOf(role) });
      props.onSaved(saved.data);
    });
  };

  return (
    <Dialog title={`Edit ${props.apiKey.appname}`} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <DescriptionField value={description} onInput={setDescription} error={errors.description} />
        <KeyRoleSelect user={props.user} value={role} onChange={setRole} error={errors.roles} />
        <FormError message={errors.form} />
        <Buttons action="Save" busy={busy} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

export function RegenerateKeyDialog(props: { apiKey: ApiKey; onClose: () => void; onRegenerated: (key: KeyWithSecret) => void }) {
  const [grace, setGrace] = useState('0');
  const { errors, busy, submitting } = useSubmission<Errors>(errorsOf, {});

  const submit = async (event: Event) => {
    event.preventDefault();
    await submitting(async () => {
      const query = `?grace_seconds=${encodeURIComponent(grace.trim() || '0')}`;
      // Regenerate replaces the record too: the key keeps its description and role only if they are sent.
      const regenerated = await call<{ data: KeyWithSecret }>('PUT', `${keyPath(props.apiKey.appname)}/regen${query}`, {
        description: props.apiKey.description,
        roles: props.apiKey.roles,
      });
      props.onRegenerated(regenerated.data);
    });
  };

  return (
    <Dialog title={`Regenerate ${props.apiKey.appname}`} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <p>
          A new appkey replaces the current one. With a grace period, the current appkey and the tokens obtained with it keep working for that many seconds, so
          its users can switch over; with 0 they stop working now.
        </p>
        <Field label="Grace period (seconds)" error={errors.grace_seconds} hint={`0 to ${MAX_GRACE_SECONDS.toLocaleString('en')} (7 days).`}>
          {({ id, describedBy }) => (
            <input
              id={id}
              autofocus
              inputMode="numeric"
              aria-describedby={describedBy}
              aria-invalid={errors.grace_seconds ? true : undefined}
              value={grace}
              onInput={(e) => setGrace(e.currentTarget.value)}
            />
          )}
        </Field>
        <FormError message={errors.form} />
        <Buttons action="Regenerate" busy={busy} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

export function DeleteKeyDialog(props: { apiKey: ApiKey; onClose: () => void; onDeleted: () => void }) {
  const [typed, setTyped] = useState('');
  const { errors: error, busy, submitting } = useSubmission<string | undefined>(describe, undefined);
  const matches = typed === props.apiKey.appname;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!matches) return;
    await submitting(async () => {
      await call('DELETE', keyPath(props.apiKey.appname));
      props.onDeleted();
    });
  };

  return (
    <Dialog title={`Delete ${props.apiKey.appname}`} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <p>
          The key and its appkey are deleted, and every token obtained with it stops working at once. This cannot be undone. Type <strong class="mono">{props.apiKey.appname}</strong>{' '}
          to confirm.
        </p>
        <Field label="Type the appname to confirm">
          {({ id, describedBy }) => <input id={id} autofocus autocomplete="off" spellcheck={false} aria-describedby={describedBy} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />}
        </Field>
        <FormError message={error} />
        <Buttons action="Delete" busy={busy} danger disabled={!matches} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

/** The new appkey, shown this once; closing the dialog forgets it. */
export function NewAppkeyDialog(props: { apiKey: KeyWithSecret; regenerated: boolean; onClose: () => void }) {
  const [copied, setCopied] = useState<string>();

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.apiKey.appkey);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('Copying was refused by the browser: select the appkey and copy it yourself.');
    }
  };

  return (
    <Dialog title={props.regenerated ? `New appkey for ${props.apiKey.appname}` : `Key ${props.apiKey.appname} created`} onClose={props.onClose} wide>
      <p class="banner banner-warning">Copy the appkey now and keep it like a password: it will not be shown again.</p>
      <Field label="Appkey">
        {({ id }) => (
          <div class="copy-row">
            <input id={id} class="mono" readOnly value={props.apiKey.appkey} onFocus={(e) => e.currentTarget.select()} spellcheck={false} autocomplete="off" />
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
