import { ROLE_OPTIONS, type RoleOption } from './api';
import { Field } from './dialog';

/** What each role may do, in the words the role select shows under itself (contract, "Principals and roles"). */
export const ROLE_POWERS: Record<RoleOption, string> = {
  none: 'No role: gets tokens, but every key operation is refused.',
  viewer: 'Viewer: lists and reads API keys; changes nothing.',
  editor: 'Editor: also creates, edits, regenerates and deletes keys whose role is viewer, editor or none.',
  admin: 'Admin: everything: admin keys too, users and the audit log.',
};

/**
 * The Role select (options none, viewer, editor, admin) with what the chosen role may do beneath it,
 * announced with the field. `adminAllowed` false: the admin option is shown but disabled, with why.
 */
export function RoleSelect(props: { value: RoleOption; onChange: (value: RoleOption) => void; error?: string; adminAllowed: boolean; whyNoAdmin?: string }) {
  const hint = `${ROLE_POWERS[props.value]}${props.adminAllowed || !props.whyNoAdmin ? '' : ` ${props.whyNoAdmin}`}`;
  return (
    <Field label="Role" error={props.error} hint={hint}>
      {({ id, describedBy }) => (
        <select id={id} aria-describedby={describedBy} aria-invalid={props.error ? true : undefined} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as RoleOption)}>
          {ROLE_OPTIONS.map((option) => (
            <option value={option} disabled={option === 'admin' && !props.adminAllowed}>
              {option}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
