import { useEffect, useState } from 'preact/hooks';
import { ApiError, SessionEnded, describe, type ApiKey, type KeyPolicy } from './api';
import { localDateTime } from './format';
import { PolicyForm } from './policy-form';
import { call, type User } from './session';
import { statusOf, StatusBadge } from './key-status';
import { UsageSection } from './usage-section';

const keyPath = (appname: string) => `/api/v1/api-keys/${encodeURIComponent(appname)}`;

/** Editors manage keys up to editor; admins all (the API decides all the same). */
function whyReadOnly(user: User, key: ApiKey): string | undefined {
  if (user.role === 'admin') return undefined;
  if (user.role === 'editor') return key.roles[0] === 'admin' ? 'Only admins can change the policy of an admin key.' : undefined;
  return 'Only editors and admins can change a key\u2019s policy.';
}

type Loaded = { key: ApiKey; policy: KeyPolicy } | { error: string; notFound: boolean } | undefined;

/** A key's own page, /console/keys/{appname}: what the key is, when it was made and last used, and its policy. */
export function KeyPage(props: { user: User; appname: string; onBack: () => void }) {
  const { user, appname } = props;
  const [loaded, setLoaded] = useState<Loaded>();
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let current = true;
    setLoaded(undefined);
    Promise.all([call<{ data: ApiKey }>('GET', keyPath(appname)), call<{ data: KeyPolicy }>('GET', `${keyPath(appname)}/policy`)])
      .then(([key, policy]) => current && setLoaded({ key: key.data, policy: policy.data }))
      .catch((err: unknown) => {
        if (!current || err instanceof SessionEnded) return;
        setLoaded({ error: describe(err), notFound: err instanceof ApiError && err.status === 404 });
      });
    return () => {
      current = false;
    };
  }, [appname, attempt]);

  const back = (
    <a
      href="/console/"
      class="back"
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        props.onBack();
      }}
    >
      ← All keys
    </a>
  );

  if (!loaded) {
    return (
      <section class="page" aria-busy="true">
        {back}
        <p class="table-state">Loading {appname}…</p>
      </section>
    );
  }
  if ('error' in loaded) {
    return (
      <section class="page">
        {back}
        <div class="banner banner-error" role="alert">
          <span>{loaded.notFound ? `There is no key named “${appname}”.` : loaded.error}</span>
          {!loaded.notFound && (
            <button type="button" class="button" onClick={() => setAttempt((n) => n + 1)}>
              Try again
            </button>
          )}
        </div>
      </section>
    );
  }

  const { key, policy } = loaded;
  const reason = whyReadOnly(user, key);
  return (
    <section class="page" aria-labelledby="key-title">
      {back}
      <div class="page-head key-head">
        <h1 id="key-title" class="mono">
          {key.appname}
        </h1>
        <StatusBadge status={statusOf(policy)} />
        <span class={`role role-${key.roles[0] ?? 'none'}`}>{key.roles[0] ?? 'none'}</span>
      </div>
      {key.description && <p class="muted">{key.description}</p>}
      <KeyStanding policy={policy} />
      <dl class="key-facts">
        <div>
          <dt>Created</dt>
          <dd>{localDateTime(policy.created_at)}</dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd>{policy.last_used === null ? <span class="muted">never</span> : localDateTime(policy.last_used)}</dd>
        </div>
        <div>
          <dt>Last login</dt>
          <dd>{key.last_login === null ? <span class="muted">never</span> : `${localDateTime(key.last_login)} from ${key.last_ip ?? 'unknown'}`}</dd>
        </div>
        <div>
          <dt>Expires</dt>
          <dd>{policy.expires_at === null ? <span class="muted">never</span> : <Expiry at={policy.expires_at} />}</dd>
        </div>
      </dl>
      <UsageSection appname={key.appname} />
      <section class="panel" aria-labelledby="policy-title">
        <h2 id="policy-title">Policy</h2>
        <PolicyForm appname={key.appname} policy={policy} editable={reason === undefined} reason={reason} onSaved={(saved) => setLoaded({ key, policy: saved })} />
      </section>
    </section>
  );
}

/** Why a key is off, as its page says it (disabled_reason). */
const DISABLED_REASONS: Record<NonNullable<KeyPolicy['disabled_reason']>, string> = {
  manual: 'turned off by hand',
  idle: 'unused for longer than its max idle days',
  leaked: 'reported as leaked',
  holder: 'turned off by its holder',
};

/**
 * What an operator must see first on a key that does not work: that it is off and why, or since when
 * it has expired, and what brings it back. Nothing for a key that works.
 */
function KeyStanding(props: { policy: KeyPolicy }) {
  const { policy } = props;
  const expired = statusOf({ enabled: true, expires_at: policy.expires_at }) === 'expired';
  if (policy.enabled && !expired) return null;
  return (
    <div class="banner banner-warning standing">
      {!policy.enabled && (
        <p>
          <strong>Disabled</strong>: {policy.disabled_reason ? DISABLED_REASONS[policy.disabled_reason] : 'turned off'}. It authenticates nowhere and its tokens
          stopped working; tick Enabled in its policy to turn it on again.
        </p>
      )}
      {expired && policy.expires_at !== null && (
        <p>
          <strong>Expired</strong> on {localDateTime(policy.expires_at)}. It authenticates nowhere; a later Expires at in its policy brings it back.
        </p>
      )}
    </div>
  );
}

const DAY_SECONDS = 86_400;
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'always' });

/** An expiry as a local date and time, with how far off it is ("in 6 days") or that it has passed. */
function Expiry(props: { at: number }) {
  const left = props.at - Date.now() / 1000;
  if (left <= 0) return <span class="status-expired">{localDateTime(props.at)} (expired)</span>;
  const soon =
    left >= DAY_SECONDS
      ? relative.format(Math.round(left / DAY_SECONDS), 'day')
      : left >= 3600
        ? relative.format(Math.round(left / 3600), 'hour')
        : relative.format(Math.ceil(left / 60), 'minute');
  return (
    <>
      {localDateTime(props.at)} <span class="muted">({soon})</span>
    </>
  );
}
