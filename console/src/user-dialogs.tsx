import { useState } from 'preact/hooks';
import { ApiError, describe, type RoleOption, type UserRecord } from './api';
import { Dialog, Field } from './dialog';
import { Buttons, capitalised, FormError, useSubmission } from './forms';
import { PASSWORD_RULE, PasswordField, USERNAME_RULE, usernameProblem } from './passwords';
import { RoleSelect } from './role-select';
import { call } from './session';

const USERS = '/api/v1/users';
export const userPath = (username: string) => `${USERS}/${encodeURIComponent(username)}`;

type Errors = Partial<Record<'username' | 'role' | 'password' | 'form', string>>;

/** Places a refusal: beside the field a 400 names, beside Username for a taken name, else above the buttons (a last admin's 409, a 403...). */
function errorsOf(err: unknown, conflictField?: 'username'): Errors {
  if (err instanceof ApiError) {
    if (err.status === 409 && conflictField && /already exists/.test(err.message)) return { [conflictField]: err.message };
    if (err.status === 400 && err.field && ['username', 'role', 'password'].includes(err.field)) return { [err.field]: `${capitalised(err.message)}.` };
  }
  return { form: describe(err) };
}

const roleOf = (option: RoleOption) => (option === 'none' ? null : option);
const optionOf = (user: UserRecord): RoleOption => user.role ?? 'none';

/** A user with the password the service generated for it, as create answers when none was given. */
export type UserWithPassword = UserRecord & { password?: string };

export function CreateUserDialog(props: { onClose: () => void; onCreated: (user: UserWithPassword) => void }) {
  const [username, setUsername] = useState('');
  const [touched, setTouched] = useState(false);
  const [role, setRole] = useState<RoleOption>('viewer');
  const [password, setPassword] = useState('');
  const { errors, setErrors, busy, submitting } = useSubmission<Errors>((err) => errorsOf(err, 'username'), {});
  const usernameError = errors.username ?? (touched ? usernameProblem(username) : undefined);

  const submit = async (event: Event) => {
    event.preventDefault();
    setTouched(true);
    if (usernameProblem(username)) return;
    await submitting(async () => {
      const created = await call<{ data: UserWithPassword }>('POST', USERS, { username, role: roleOf(role), ...(password && { password }) });
      props.onCreated(created.data);
    });
  };

  return (
    <Dialog title="Create user" onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="Username" error={usernameError} hint={`${USERNAME_RULE}.`}>
          {({ id, describedBy }) => (
            <input
              id={id}
              autofocus
              autocomplete="off"
              spellcheck={false}
              aria-describedby={describedBy}
              aria-invalid={usernameError ? true : undefined}
              value={username}
              onInput={(e) => {
                setUsername(e.currentTarget.value);
                setTouched(true);
                setErrors((current) => ({ ...current, username: undefined }));
              }}
            />
          )}
        </Field>
        <RoleSelect value={role} onChange={setRole} error={errors.role} adminAllowed />
        <PasswordField label="Password" value={password} onInput={setPassword} error={errors.password} hint={`Optional: leave it empty and a password is generated and shown once. ${PASSWORD_RULE}`} />
        <FormError message={errors.form} />
        <Buttons action="Create" busy={busy} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

export function EditUserDialog(props: { user: UserRecord; onClose: () => void; onSaved: (user: UserRecord) => void }) {
  const [role, setRole] = useState<RoleOption>(optionOf(props.user));
  const { errors, busy, submitting } = useSubmission<Errors>(errorsOf, {});

  const submit = async (event: Event) => {
    event.preventDefault();
    await submitting(async () => {
      // PUT replaces both: disabled goes as it is.
      const saved = await call<{ data: UserRecord }>('PUT', userPath(props.user.username), { role: roleOf(role), disabled: props.user.disabled });
      props.onSaved(saved.data);
    });
  };

  return (
    <Dialog title={`Edit ${props.user.username}`} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <RoleSelect value={role} onChange={setRole} error={errors.role} adminAllowed />
        <p class="muted">A new role ends every session of the user: they sign in again and get the new role’s rights.</p>
        <FormError message={errors.form} />
        <Buttons action="Save" busy={busy} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

/** Disable or enable, confirmed: disabling ends every session of the user. */
export function UserStatusDialog(props: { user: UserRecord; onClose: () => void; onSaved: (user: UserRecord) => void }) {
  const disabling = !props.user.disabled;
  const { errors, busy, submitting } = useSubmission<Errors>(errorsOf, {});

  const submit = async (event: Event) => {
    event.preventDefault();
    await submitting(async () => {
      const saved = await call<{ data: UserRecord }>('PUT', userPath(props.user.username), { role: props.user.role, disabled: disabling });
      props.onSaved(saved.data);
    });
  };

  return (
    <Dialog title={`${disabling ? 'Disable' : 'Enable'} ${props.user.username}`} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <p>
          {disabling
            ? 'The user can no longer sign in, and every session they have ends now. You can enable them again later.'
            : 'The user can sign in again with their password.'}
        </p>
        <FormError message={errors.form} />
        <Buttons action={disabling ? 'Disable' : 'Enable'} busy={busy} danger={disabling} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

export function ResetPasswordDialog(props: { user: UserRecord; onClose: () => void; onDone: () => void }) {
  const [password, setPassword] = useState('');
  const { errors, busy, submitting } = useSubmission<Errors>(errorsOf, {});

  const submit = async (event: Event) => {
    event.preventDefault();
    await submitting(async () => {
      await call('PUT', `${userPath(props.user.username)}/password`, { password });
      props.onDone();
    });
  };

  return (
    <Dialog title={`Reset password of ${props.user.username}`} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <p>The new password replaces the old one at once, and every session of the user ends. Tell them the new password in a safe way.</p>
        <PasswordField label="New password" value={password} onInput={setPassword} error={errors.password} hint={PASSWORD_RULE} autofocus />
        <FormError message={errors.form} />
        <Buttons action="Reset password" busy={busy} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

export function DeleteUserDialog(props: { user: UserRecord; onClose: () => void; onDeleted: () => void }) {
  const [typed, setTyped] = useState('');
  const { errors: error, busy, submitting } = useSubmission<string | undefined>(describe, undefined);
  const matches = typed === props.user.username;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!matches) return;
    await submitting(async () => {
      await call('DELETE', userPath(props.user.username));
      props.onDeleted();
    });
  };

  return (
    <Dialog title={`Delete ${props.user.username}`} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <p>
          The user is deleted and every session they have ends at once. This cannot be undone. Type <strong class="mono">{props.user.username}</strong> to confirm.
        </p>
        <Field label="Type the username to confirm">
          {({ id, describedBy }) => <input id={id} autofocus autocomplete="off" spellcheck={false} aria-describedby={describedBy} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />}
        </Field>
        <FormError message={error} />
        <Buttons action="Delete" busy={busy} danger disabled={!matches} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}
