import { useState } from 'preact/hooks';

// The pieces every dialog form is made of: its error above the buttons, its submission, its buttons.

export const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1).replace(/\.$/, '');

export function FormError(props: { message?: string }) {
  return props.message ? (
    <p class="banner banner-error" role="alert">
      {props.message}
    </p>
  ) : null;
}

/**
 * A dialog form's submission: busy while it runs; a refusal is placed by `place` (beside a field, or
 * above the buttons) and the form can be sent again. On success the dialog's caller takes over.
 */
export function useSubmission<E>(place: (err: unknown) => E, none: E) {
  const [errors, setErrors] = useState<E>(none);
  const [busy, setBusy] = useState(false);
  const submitting = async (send: () => Promise<void>) => {
    setBusy(true);
    setErrors(none);
    try {
      await send();
    } catch (err) {
      setErrors(place(err));
      setBusy(false);
    }
  };
  return { errors, setErrors, busy, submitting };
}

export function Buttons(props: { action: string; busy: boolean; danger?: boolean; disabled?: boolean; onCancel: () => void }) {
  return (
    <div class="dialog-actions">
      <button type="button" class="button" onClick={props.onCancel}>
        Cancel
      </button>
      <button type="submit" class={props.danger ? 'button button-danger' : 'button button-primary'} disabled={props.busy || props.disabled} aria-busy={props.busy}>
        {props.action}
      </button>
    </div>
  );
}
