import { useState } from 'preact/hooks';
import { ApiError, describe } from './api';
import { Dialog, Field } from './dialog';
import { call } from './session';
import { AUDIT_EVENT_TYPES } from '../../src/shared/audit-context';

export const WEBHOOKS = '/api/v1/webhooks';

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  /** Unix seconds. */
  created_at: number;
}

export type WebhookWithSecret = Webhook & { secret: string };

type Errors = Partial<Record<'url' | 'events' | 'description' | 'form', string>>;

/** A 400 beside the field it names, anything else above the buttons. */
function errorsOf(err: unknown): Errors {
  if (err instanceof ApiError && err.status === 400 && (err.field === 'url' || err.field === 'events' || err.field === 'description')) return { [err.field]: err.message };
  return { form: describe(err) };
}

function FormError(props: { message?: string }) {
  return props.message ? (
    <p class="banner banner-error" role="alert">
      {props.message}
    </p>
  ) : null;
}

function Actions(props: { action: string; busy: boolean; danger?: boolean; onCancel: () => void }) {
  return (
    <div class="dialog-actions">
      <button type="button" class="button" onClick={props.onCancel}>
        Cancel
      </button>
      <button type="submit" class={props.danger ? 'button button-danger' : 'button button-primary'} disabled={props.busy} aria-busy={props.busy}>
        {props.action}
      </button>
    </div>
  );
}

/** Runs one request for a dialog: busy meanwhile, the refusal kept for the dialog to show. */
function useSending<E>(place: (err: unknown) => E, none: E) {
  const [errors, setErrors] = useState<E>(none);
  const [busy, setBusy] = useState(false);
  const sending = async (event: Event, send: () => Promise<void>) => {
    event.preventDefault();
    setBusy(true);
    setErrors(none);
    try {
      await send();
    } catch (err) {
      setErrors(place(err));
      setBusy(false);
    }
  };
  return { errors, busy, sending };
}

/** Create (no `webhook`) or replace an endpoint: URL, the events it receives, description, and (when editing) enabled. */
export function WebhookFormDialog(props: { webhook?: Webhook; onClose: () => void; onSaved: (saved: Webhook | WebhookWithSecret) => void }) {
  const editing = props.webhook;
  const [url, setUrl] = useState(editing?.url ?? 'https://');
  const [all, setAll] = useState(editing ? editing.events.includes('*') : true);
  const [types, setTypes] = useState<string[]>(editing?.events.filter((e) => e !== '*') ?? []);
  const [description, setDescription] = useState(editing?.description ?? '');
  const [enabled, setEnabled] = useState(editing?.enabled ?? true);
  const { errors, busy, sending } = useSending<Errors>(errorsOf, {});

  const submit = (event: Event) =>
    sending(event, async () => {
      const events = all ? ['*'] : types;
      // PUT replaces the endpoint: every field goes, changed or not.
      const body = editing ? { url, events, description, enabled } : { url, events, description };
      const saved = await call<{ data: Webhook | WebhookWithSecret }>(editing ? 'PUT' : 'POST', editing ? `${WEBHOOKS}/${editing.id}` : WEBHOOKS, body);
      props.onSaved(saved.data);
    });
  const toggle = (type: string, on: boolean) => setTypes((current) => (on ? [...current, type] : current.filter((t) => t !== type)));

  return (
    <Dialog title={editing ? 'Edit endpoint' : 'Create endpoint'} onClose={props.onClose} wide>
      <form onSubmit={submit} noValidate>
        <Field label="URL" error={errors.url} hint="https: and a public address (the service refuses private ones unless WEBHOOK_ALLOW_INSECURE=true).">
          {({ id, describedBy }) => (
            <input id={id} autofocus type="url" spellcheck={false} autocomplete="off" aria-describedby={describedBy} aria-invalid={errors.url ? true : undefined} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          )}
        </Field>
        <fieldset class={errors.events ? 'field field-invalid events' : 'field events'}>
          <legend>Events</legend>
          <label class="check">
            <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} /> All events
          </label>
          {!all && (
            <div class="event-choices">
              {AUDIT_EVENT_TYPES.map((type) => (
                <label class="check event-type">
                  <input type="checkbox" checked={types.includes(type)} onChange={(e) => toggle(type, e.currentTarget.checked)} /> {type}
                </label>
              ))}
            </div>
          )}
          {errors.events && <p class="field-error">{errors.events}</p>}
        </fieldset>
        <Field label="Description" error={errors.description}>
          {({ id, describedBy }) => <textarea id={id} rows={2} maxLength={1024} aria-describedby={describedBy} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
        </Field>
        {editing && (
          <label class="check">
            <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled
          </label>
        )}
        <FormError message={errors.form} />
        <Actions action={editing ? 'Save' : 'Create'} busy={busy} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

/** A confirmation that then sends one request: delete, rotate the secret. */
export function ConfirmDialog(props: { title: string; action: string; danger?: boolean; text: string; send: () => Promise<void>; onClose: () => void }) {
  const { errors: error, busy, sending } = useSending<string | undefined>(describe, undefined);
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <form onSubmit={(event) => sending(event, props.send)} noValidate>
        <p>{props.text}</p>
        <FormError message={error} />
        <Actions action={props.action} busy={busy} danger={props.danger} onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

/** The signing secret, shown this once; closing the dialog forgets it. */
export function NewSecretDialog(props: { webhook: WebhookWithSecret; rotated: boolean; onClose: () => void }) {
  const [copied, setCopied] = useState<string>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.webhook.secret);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('Copying was refused by the browser: select the secret and copy it yourself.');
    }
  };
  return (
    <Dialog title={props.rotated ? 'New signing secret' : 'Endpoint created'} onClose={props.onClose} wide>
      <p class="banner banner-warning">
        Copy the signing secret now and give it to the receiver's Standard Webhooks verifier: it will not be shown again.
        {props.rotated && ' For 24 hours, messages are signed with the old secret too.'}
      </p>
      <Field label="Signing secret">
        {({ id }) => (
          <div class="copy-row">
            <input id={id} class="mono" readOnly value={props.webhook.secret} onFocus={(e) => e.currentTarget.select()} spellcheck={false} autocomplete="off" />
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
