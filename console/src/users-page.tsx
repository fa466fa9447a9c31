import { useState } from 'preact/hooks';
import { queryString, type UserRecord } from './api';
import { localDateTime } from './format';
import { usePagedList } from './paged-list';
import { ShownOnceDialog } from './passwords';
import { call, type User } from './session';
import { CreateUserDialog, DeleteUserDialog, EditUserDialog, ResetPasswordDialog, UserStatusDialog, type UserWithPassword } from './user-dialogs';

const PAGE_SIZE = 50;

type Action = 'edit' | 'status' | 'password' | 'delete';
type Open = { kind: 'create' } | { kind: Action; user: UserRecord } | { kind: 'created'; user: UserWithPassword & { password: string } } | undefined;

const listUsers = async (_query: null, after: string | undefined) => (await call<{ data: UserRecord[] }>('GET', `/api/v1/users${queryString({ limit: PAGE_SIZE, after })}`)).data;

/** The users, for admins (the API refuses others, and the console shows them no link). */
export function UsersPage(props: { user: User }) {
  const list = usePagedList({ query: null, pageSize: PAGE_SIZE, fetchPage: listUsers, cursorOf: (u: UserRecord) => u.username, fields: [], debounceMs: () => 0 });
  const { items: users, setItems: setUsers, state, error } = list;
  const [open, setOpen] = useState<Open>();
  const [notice, setNotice] = useState<string>();

  const replace = (user: UserRecord) => setUsers((current) => current.map((u) => (u.username === user.username ? user : u)));
  const done = (message: string) => {
    setOpen(undefined);
    setNotice(message);
  };

  return (
    <section class="page" aria-labelledby="users-title">
      <div class="page-head">
        <h1 id="users-title">Users</h1>
        <button type="button" class="button button-primary" onClick={() => setOpen({ kind: 'create' })}>
          Create user
        </button>
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
                <th scope="col">Username</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Last login</th>
                <td class="actions-head" />
              </tr>
            </thead>
            <tbody>
              {users.map((user) => (
                <UserRow key={user.username} user={user} you={user.username === props.user.username} onOpen={(kind) => setOpen({ kind, user })} />
              ))}
            </tbody>
          </table>
          {state === 'loading' && <p class="table-state">Loading users…</p>}
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
        <CreateUserDialog
          onClose={() => setOpen(undefined)}
          onCreated={(user) => {
            list.reload();
            if (user.password) setOpen({ kind: 'created', user: { ...user, password: user.password } });
            else setOpen(undefined);
            setNotice(`User ${user.username} created.`);
          }}
        />
      )}
      {open?.kind === 'created' && <ShownOnceDialog title={`User ${open.user.username} created`} label="Password" secret={open.user.password} onClose={() => setOpen(undefined)} />}
      {open?.kind === 'edit' && (
        <EditUserDialog
          user={open.user}
          onClose={() => setOpen(undefined)}
          onSaved={(user) => {
            replace(user);
            done(`Role of ${user.username} is now ${user.role ?? 'none'}; their sessions ended.`);
          }}
        />
      )}
      {open?.kind === 'status' && (
        <UserStatusDialog
          user={open.user}
          onClose={() => setOpen(undefined)}
          onSaved={(user) => {
            replace(user);
            done(user.disabled ? `${user.username} is disabled; their sessions ended.` : `${user.username} is enabled.`);
          }}
        />
      )}
      {open?.kind === 'password' && <ResetPasswordDialog user={open.user} onClose={() => setOpen(undefined)} onDone={() => done(`Password of ${open.user.username} reset; their sessions ended.`)} />}
      {open?.kind === 'delete' && (
        <DeleteUserDialog
          user={open.user}
          onClose={() => setOpen(undefined)}
          onDeleted={() => {
            setUsers((current) => current.filter((u) => u.username !== open.user.username));
            done(`User ${open.user.username} deleted.`);
          }}
        />
      )}
    </section>
  );
}

const ACTIONS: [Action, (user: UserRecord) => string, string][] = [
  ['edit', () => 'Edit', 'button button-small'],
  ['status', (user) => (user.disabled ? 'Enable' : 'Disable'), 'button button-small'],
  ['password', () => 'Reset password', 'button button-small'],
  ['delete', () => 'Delete', 'button button-small button-danger-quiet'],
];

function UserRow(props: { user: UserRecord; you: boolean; onOpen: (kind: Action) => void }) {
  const { user } = props;
  return (
    <tr>
      <th scope="row" class="mono appname">
        {user.username}
        {props.you && <span class="muted"> (you)</span>}
      </th>
      <td data-label="Role">
        <span class={`role role-${user.role ?? 'none'}`}>{user.role ?? 'none'}</span>
      </td>
      <td data-label="Status">{user.disabled ? <span class="status-disabled">disabled</span> : 'active'}</td>
      <td class="nowrap" data-label="Created">{localDateTime(user.created_at)}</td>
      <td class="nowrap" data-label="Last login">{user.last_login !== null ? localDateTime(user.last_login) : <span class="muted">never</span>}</td>
      <td class="actions">
        <div class="action-buttons">
          {ACTIONS.map(([kind, label, style]) => (
            <button type="button" class={style} onClick={() => props.onOpen(kind)}>
              {label(user)}
            </button>
          ))}
        </div>
      </td>
    </tr>
  );
}
