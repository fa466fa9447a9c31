import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * A modal dialog: the native <dialog> opened with showModal (the page behind it inert), focus kept
 * inside it (Tab and Shift+Tab wrap around), Escape calls onClose. Focus returns to where it was.
 */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean; class?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const onClose = useRef(props.onClose);
  onClose.current = props.onClose;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const before = document.activeElement as HTMLElement | null;
    dialog.showModal();
    const first = dialog.querySelector<HTMLElement>('[autofocus]') ?? dialog.querySelector<HTMLElement>(FOCUSABLE);
    first?.focus();
    const cancel = (event: Event) => {
      // Escape: the dialog closes through the app's state, like every other way out.
      event.preventDefault();
      onClose.current();
    };
    const trap = (event: KeyboardEvent) => {
      if (event.key !== 'Tab') return;
      const focusable = [...dialog.querySelectorAll<HTMLElement>(FOCUSABLE)];
      const head = focusable[0];
      const tail = focusable[focusable.length - 1];
      if (!head || !tail) return;
      if (event.shiftKey && (document.activeElement === head || !dialog.contains(document.activeElement))) {
        event.preventDefault();
        tail.focus();
      } else if (!event.shiftKey && (document.activeElement === tail || !dialog.contains(document.activeElement))) {
        event.preventDefault();
        head.focus();
      }
    };
    dialog.addEventListener('cancel', cancel);
    dialog.addEventListener('keydown', trap);
    return () => {
      dialog.removeEventListener('cancel', cancel);
      dialog.removeEventListener('keydown', trap);
      if (dialog.open) dialog.close();
      if (before?.isConnected) before.focus();
    };
  }, []);

  return (
    <dialog ref={ref} class={['dialog', props.wide && 'dialog-wide', props.class].filter(Boolean).join(' ')} aria-labelledby={titleId}>
      <h2 id={titleId} class="dialog-title">
        {props.title}
      </h2>
      {props.children}
    </dialog>
  );
}

/** A labelled form control with its hint and its error right beneath it, tied together for screen readers. */
export function Field(props: { label: string; error?: string; hint?: string; children: (ids: { id: string; describedBy?: string }) => ComponentChildren }) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [props.hint ? hintId : '', props.error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={props.error ? 'field field-invalid' : 'field'}>
      <label for={id}>{props.label}</label>
      {props.children({ id, describedBy })}
      {props.hint && (
        <p id={hintId} class="hint">
          {props.hint}
        </p>
      )}
      {props.error && (
        <p id={errorId} class="field-error">
          {props.error}
        </p>
      )}
    </div>
  );
}
