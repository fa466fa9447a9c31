import { useEffect, useRef, useState } from 'preact/hooks';
import { queryString, type ApiKey, type KeyPolicy } from './api';
import { CreateKeyDialog, DeleteKeyDialog, EditKeyDialog, NewAppkeyDialog, RegenerateKeyDialog, type KeyWithSecret } from './key-dialogs';
import { localDateTime } from './format';
import { usePagedList } from './paged-list';
import { call, type User } from './session';
import { statusOf, StatusBadge, type KeyStatus } from './key-status';
import { useQueryState } from './url-state';

const PAGE_SIZE = 50;

type Open =
  | { kind: 'create' }
  | { kind: 'edit' | 'regenerate' | 'delete'; key: ApiKey }
  | { kind: 'secret'; key: KeyWithSecret; regenerated: boolean }
  | undefined;

const canWrite = (user: User) => user.role === 'editor' || user.role === 'admin';
/** Editors manage keys up to editor; the API decides all the same. */
const canManage = (user: User, key: ApiKey) => user.role === 'admin' || (user.role === 'editor' && key.roles[0] !== 'admin');

/** The filter lives in the URL (?prefix=), so a reload or a shared link shows the same keys. */
const KEYS_QUERY = ['prefix'] as const;

const listKeys = async (prefix: string, after: string | undefined) =>
  (await call<{ data: ApiKey[] }>('GET', `/api/v1/api-keys${queryString({ limit: PAGE_SIZE, after, prefix })}`)).data;

/**
 * Whether each listed key works now (its policy: on, not expired), for the table's badges. The key
 * record has no such field (its shape is the API's), so each row's policy is read, a few at a time;
 * a row whose policy cannot be read just shows no badge.
 */
function useKeyStatuses(keys: ApiKey[]): Map<string, KeyStatus> {
  const [statuses, setStatuses] = useState<Map<string, KeyStatus>>(new Map());
  const asked = useRef(new Set<string>());
  const gone = useRef(false);
  // Leaving the page (another page, or signing out) stops the reads not yet sent.
  useEffect(() => () => void (gone.current = true), []);
  useEffect(() => {
    const pending = keys.map((k) => k.appname).filter((name) => !asked.current.has(name));
    pending.forEach((name) => asked.current.add(name));
    let next = 0;
    const worker = async () => {
      while (next < pending.length && !gone.current) {
        const appname = pending[next++]!;
        try {
          const { data } = await call<{ data: KeyPolicy }>('GET', `/api/v1/api-keys/${encodeURIComponent(appname)}/policy`);
          setStatuses((current) => new Map(current).set(appname, statusOf(data)));
        } catch {
          asked.current.delete(appname);
        }
      }
    };
    for (let i = 0; i < 4; i++) void worker();
  }, [keys]);
  return statuses;
}

export function KeysPage(props: { user: User; onOpenKey: (appname: string) => void }) {
  const { user } = props;
  const [{ prefix: filter }, setQuery] = useQueryState(KEYS_QUERY);
  const setFilter = (typed: string) => setQuery({ prefix: typed });
  const prefix = filter.trim();
  const list = usePagedList({
    query: prefix,
    pageSize: PAGE_SIZE,
    fetchPage: listKeys,
    cursorOf: (key: ApiKey) => key.appname,
    fields: ['prefix'],
    debounceMs: (typed) => (typed ? 250 : 0),
  });
  const { items: keys, setItems: setKeys, state, error } = list;
  const filterError = list.fieldErrors.prefix;
  const [open, setOpen] = useState<Open>();
  const [notice, setNotice] = useState<string>();
  const statuses = useKeyStatuses(keys);

  const replace = (key: ApiKey) => setKeys((current) => current.map((k) => (k.appname === key.appname ? { ...key } : k)));
  const writer = canWrite(user);

  return (
    <section class="page" aria-labelledby="keys-title">
      <div class="page-head">
        <h1 id="keys-title">API keys</h1>
        {writer && (
          <button type="button" class="button button-primary" onClick={() => setOpen({ kind: 'create' })}>
            Create key
          </button>
        )}
      </div>
      <div class="toolbar">
        <div class={filterError ? 'field field-invalid filter' : 'field filter'}>
          <label for="keys-filter">Filter by appname</label>
          <input
            id="keys-filter"
            type="search"
            placeholder="Appname starts with…"
            autocomplete="off"
            spellcheck={false}
            aria-describedby={filterError ? 'keys-filter-error' : undefined}
            aria-invalid={filterError ? true : undefined}
            value={filter}
            onInput={(e) => setFilter(e.currentTarget.value)}
          />
          {filterError && (
            <p id="keys-filter-error" class="field-error">
              {filterError}
            </p>
          )}
        </div>
      </div>
      {notice && (
        <p class="banner banner-success" role="status">
          {notice}
        </p>
      )}
      {state === 'error' ? (
        <div class="banner banner-error" role="alert">
          <span>{error}</span>
          <button type="button" class="button" onClick={list.reload}>
            Try again
          </button>
        </div>
      ) : (
        <div class="table-wrap" aria-busy={state === 'loading'}>
          <table class="table table-cards">
            <thead>
              <tr>
                <th scope="col">Appname</th>
                <th scope="col">Description</th>
                <th scope="col">Role</th>
                <th scope="col">Last login</th>
                <th scope="col">Last IP</th>
                {writer && <td class="actions-head" />}
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <KeyRow
                  key={key.appname}
                  apiKey={key}
                  status={statuses.get(key.appname)}
                  writer={writer}
                  manageable={canManage(user, key)}
                  onOpen={(kind) => setOpen({ kind, key })}
                  onOpenPage={() => props.onOpenKey(key.appname)}
                />
              ))}
            </tbody>
          </table>
          {state === 'loading' && <p class="table-state">Loading keys…</p>}
          {state === 'ready' && keys.length === 0 && !filterError && (
            <p class="table-state">{prefix ? `No key's appname starts with “${prefix}”.` : writer ? 'No keys yet. Create the first one.' : 'No keys yet.'}</p>
          )}
        </div>
      )}
      {error && state !== 'error' && (
        <p class="banner banner-error" role="alert">
          {error}
        </p>
      )}
      {list.hasMore && state === 'ready' && (
        <div class="more">
          <button type="button" class="button" disabled={list.loadingMore} aria-busy={list.loadingMore} onClick={list.loadMore}>
            Load more
          </button>
        </div>
      )}

      {open?.kind === 'create' && (
        <CreateKeyDialog
          user={user}
          onClose={() => setOpen(undefined)}
          onCreated={(key) => {
            setOpen({ kind: 'secret', key, regenerated: false });
            setNotice(`Key ${key.appname} created.`);
            list.reload();
          }}
        />
      )}
      {open?.kind === 'edit' && (
        <EditKeyDialog
          user={user}
          apiKey={open.key}
          onClose={() => setOpen(undefined)}
          onSaved={(key) => {
            replace(key);
            setOpen(undefined);
            setNotice(`Key ${key.appname} saved.`);
          }}
        />
      )}
      {open?.kind === 'regenerate' && (
        <RegenerateKeyDialog
          apiKey={open.key}
          onClose={() => setOpen(undefined)}
          onRegenerated={(key) => {
            const { appkey: _secret, ...record } = key;
            replace(record);
            setOpen({ kind: 'secret', key, regenerated: true });
            setNotice(`Key ${key.appname} has a new appkey.`);
          }}
        />
      )}
      {open?.kind === 'delete' && (
        <DeleteKeyDialog
          apiKey={open.key}
          onClose={() => setOpen(undefined)}
          onDeleted={() => {
            setKeys((current) => current.filter((k) => k.appname !== open.key.appname));
            setOpen(undefined);
            setNotice(`Key ${open.key.appname} deleted.`);
          }}
        />
      )}
      {open?.kind === 'secret' && <NewAppkeyDialog apiKey={open.key} regenerated={open.regenerated} onClose={() => setOpen(undefined)} />}
    </section>
  );
}

function KeyRow(props: {
  apiKey: ApiKey;
  status: KeyStatus;
  writer: boolean;
  manageable: boolean;
  onOpen: (kind: 'edit' | 'regenerate' | 'delete') => void;
  onOpenPage: () => void;
}) {
  const { apiKey: key } = props;
  const reasonId = `reason-${key.appname}`;
  return (
    <tr>
      <th scope="row" class="mono appname">
        <a
          href={`/console/keys/${encodeURIComponent(key.appname)}`}
          onClick={(event) => {
            if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
            event.preventDefault();
            props.onOpenPage();
          }}
        >
          {key.appname}
        </a>
        <StatusBadge status={props.status} />
      </th>
      <td class="description" data-label="Description">{key.description || <span class="muted">—</span>}</td>
      <td data-label="Role">
        <span class={`role role-${key.roles[0] ?? 'none'}`}>{key.roles[0] ?? 'none'}</span>
      </td>
      <td class="nowrap" data-label="Last login">{key.last_login !== null ? localDateTime(key.last_login) : <span class="muted">never</span>}</td>
      <td class="mono" data-label="Last IP">{key.last_ip ?? <span class="muted">—</span>}</td>
      {props.writer && (
        <td class="actions">
          <div class="action-buttons">
            {(['edit', 'regenerate', 'delete'] as const).map((kind) => (
              <button
                type="button"
                class={kind === 'delete' ? 'button button-small button-danger-quiet' : 'button button-small'}
                disabled={!props.manageable}
                aria-describedby={props.manageable ? undefined : reasonId}
                onClick={() => props.onOpen(kind)}
              >
                {kind === 'edit' ? 'Edit' : kind === 'regenerate' ? 'Regenerate' : 'Delete'}
              </button>
            ))}
          </div>
          {!props.manageable && (
            <p id={reasonId} class="reason">
              Only admins can change admin keys.
            </p>
          )}
        </td>
      )}
    </tr>
  );
}
