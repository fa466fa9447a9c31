import { useState } from 'preact/hooks';
import { ApiError, describe, type KeyPolicy } from './api';
import { Field } from './dialog';
import { call } from './session';

/** The form's fields as typed: text, so a half-typed number or an empty one (none) is what the user sees. */
interface Draft {
  expiresAt: string;
  enabled: boolean;
  addresses: string;
  permissions: string;
  rateLimit: string;
  windowSeconds: string;
  credits: string;
  refillAmount: string;
  refillInterval: 'none' | 'day' | 'month';
  maxIdleDays: string;
}

type FieldName = Exclude<keyof Draft, 'enabled'> | 'form';
type Errors = Partial<Record<FieldName, string>>;

/** Where a 400 names a field of the body (`rate_limit.window_seconds`, `allowed_addresses.2`): the form's field for it. */
const FIELD_OF: [RegExp, FieldName][] = [
  [/^expires_at/, 'expiresAt'],
  [/^allowed_addresses/, 'addresses'],
  [/^permissions/, 'permissions'],
  [/^rate_limit\.window_seconds/, 'windowSeconds'],
  [/^rate_limit/, 'rateLimit'],
  [/^credits\.refill\.amount/, 'refillAmount'],
  [/^credits\.refill/, 'refillInterval'],
  [/^credits/, 'credits'],
  [/^max_idle_days/, 'maxIdleDays'],
];

const pad = (n: number) => String(n).padStart(2, '0');
/** Unix seconds as a datetime-local value, in the browser's time zone. */
function localInput(seconds: number): string {
  const d = new Date(seconds * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function draftOf(p: KeyPolicy): Draft {
  return {
    expiresAt: p.expires_at === null ? '' : localInput(p.expires_at),
    enabled: p.enabled,
    addresses: p.allowed_addresses.join('\n'),
    permissions: p.permissions.join('\n'),
    rateLimit: p.rate_limit ? String(p.rate_limit.limit) : '',
    windowSeconds: p.rate_limit ? String(p.rate_limit.window_seconds) : '60',
    credits: p.credits ? String(p.credits.remaining) : '',
    refillAmount: p.credits?.refill ? String(p.credits.refill.amount) : '',
    refillInterval: p.credits?.refill?.interval ?? 'none',
    maxIdleDays: p.max_idle_days === null ? '' : String(p.max_idle_days),
  };
}

const lines = (text: string) => text.split(/[\n,]/).map((line) => line.trim()).filter(Boolean);
/** A whole number as typed, or the text itself (the API names what is wrong with it), or null when empty. */
const numberOr = (text: string): number | string | null => (text.trim() === '' ? null : /^\d+$/.test(text.trim()) ? Number(text.trim()) : text.trim());

/** The PUT body: every settable field (a PUT replaces), none of the read-only ones. */
function bodyOf(d: Draft): Record<string, unknown> {
  const expires = d.expiresAt ? Math.floor(new Date(d.expiresAt).getTime() / 1000) : null;
  const limit = numberOr(d.rateLimit);
  const credits = numberOr(d.credits);
  return {
    expires_at: Number.isNaN(expires) ? d.expiresAt : expires,
    enabled: d.enabled,
    allowed_addresses: lines(d.addresses),
    permissions: lines(d.permissions),
    rate_limit: limit === null ? null : { limit, window_seconds: numberOr(d.windowSeconds) },
    credits:
      credits === null ? null : { remaining: credits, refill: d.refillInterval === 'none' ? null : { amount: numberOr(d.refillAmount), interval: d.refillInterval } },
    max_idle_days: numberOr(d.maxIdleDays),
  };
}

/** Places a refusal: beside the field its 400 names, else above the button. */
function errorsOf(err: unknown): Errors {
  if (err instanceof ApiError && err.status === 400 && err.field) {
    const field = FIELD_OF.find(([pattern]) => pattern.test(err.field!))?.[1];
    if (field) return { [field]: `${err.message.charAt(0).toUpperCase()}${err.message.slice(1).replace(/\.$/, '')}.` };
  }
  return { form: describe(err) };
}

/**
 * The "Policy" section of a key's page: every field of the policy, saved as one PUT. Read-only (the
 * controls disabled, with the reason) for whoever may not update the key; the API decides all the same.
 */
export function PolicyForm(props: { appname: string; policy: KeyPolicy; editable: boolean; reason?: string; onSaved: (policy: KeyPolicy) => void }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(props.policy));
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  /** A change clears what was said of the fields it touches: the message is about what was sent. */
  const set = (change: Partial<Draft>) => {
    setDraft((d) => ({ ...d, ...change }));
    setErrors((e) => Object.fromEntries(Object.entries(e).filter(([field]) => !(field in change))));
    setSaved(false);
  };
  const readOnly = !props.editable;

  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      const res = await call<{ data: KeyPolicy }>('PUT', `/api/v1/api-keys/${encodeURIComponent(props.appname)}/policy`, bodyOf(draft));
      setDraft(draftOf(res.data));
      setSaved(true);
      props.onSaved(res.data);
    } catch (err) {
      setErrors(errorsOf(err));
    } finally {
      setBusy(false);
    }
  };

  const number = (name: Exclude<FieldName, 'form' | 'refillInterval'>, label: string, hint?: string) => (
    <Field label={label} error={errors[name]} hint={hint}>
      {({ id, describedBy }) => (
        <input
          id={id}
          inputMode="numeric"
          autocomplete="off"
          readOnly={readOnly}
          aria-describedby={describedBy}
          aria-invalid={errors[name] ? true : undefined}
          value={draft[name]}
          onInput={(e) => set({ [name]: e.currentTarget.value })}
        />
      )}
    </Field>
  );
  const list = (name: 'addresses' | 'permissions', label: string, hint: string) => (
    <Field label={label} error={errors[name]} hint={hint}>
      {({ id, describedBy }) => (
        <textarea
          id={id}
          rows={3}
          spellcheck={false}
          readOnly={readOnly}
          aria-describedby={describedBy}
          aria-invalid={errors[name] ? true : undefined}
          value={draft[name]}
          onInput={(e) => set({ [name]: e.currentTarget.value })}
        />
      )}
    </Field>
  );

  return (
    <form class="policy" onSubmit={save} noValidate>
      {readOnly && props.reason && <p class="banner banner-warning">{props.reason}</p>}
      <div class="policy-grid">
        <fieldset class="policy-group">
          <legend>Status</legend>
          <div class="policy-check">
            <input id="policy-enabled" type="checkbox" disabled={readOnly} checked={draft.enabled} onChange={(e) => set({ enabled: e.currentTarget.checked })} />
            <label for="policy-enabled">Enabled</label>
          </div>
          <Field label="Expires at" error={errors.expiresAt} hint="Your local time; empty: never.">
            {({ id, describedBy }) => (
              <input
                id={id}
                type="datetime-local"
                step={1}
                readOnly={readOnly}
                aria-describedby={describedBy}
                aria-invalid={errors.expiresAt ? true : undefined}
                value={draft.expiresAt}
                onInput={(e) => set({ expiresAt: e.currentTarget.value })}
              />
            )}
          </Field>
          {number('maxIdleDays', 'Max idle days', 'Turned off after this many days without use; empty: never.')}
        </fieldset>
        <fieldset class="policy-group">
          <legend>Where from, what for</legend>
          {list('addresses', 'Allowed addresses', 'One address or CIDR range per line; empty: anywhere.')}
          {list('permissions', 'Permissions', 'One name per line, e.g. billing:read; carried in the key\u2019s tokens.')}
        </fieldset>
        <fieldset class="policy-group">
          <legend>How much</legend>
          <div class="pair">
            {number('rateLimit', 'Rate limit', 'Authentications per window; empty: none.')}
            {number('windowSeconds', 'Window (seconds)')}
          </div>
          {number('credits', 'Credits', 'Uses left; empty: no limit.')}
          <div class="pair">
            {number('refillAmount', 'Refill amount')}
            <Field label="Refill interval" error={errors.refillInterval} hint="At 00:00 UTC: each day, or on the 1st.">
              {({ id, describedBy }) => (
                <select
                  id={id}
                  disabled={readOnly}
                  aria-describedby={describedBy}
                  value={draft.refillInterval}
                  onChange={(e) => set({ refillInterval: e.currentTarget.value as Draft['refillInterval'] })}
                >
                  <option value="none">none</option>
                  <option value="day">day</option>
                  <option value="month">month</option>
                </select>
              )}
            </Field>
          </div>
        </fieldset>
      </div>
      {errors.form && (
        <p class="banner banner-error" role="alert">
          {errors.form}
        </p>
      )}
      {saved && (
        <p class="banner banner-success" role="status">
          Policy saved.
        </p>
      )}
      {props.editable && (
        <div class="form-actions">
          <button type="submit" class="button button-primary" disabled={busy} aria-busy={busy}>
            Save policy
          </button>
        </div>
      )}
    </form>
  );
}
