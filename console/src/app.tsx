import { Component, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { describe } from './api';
import { AuditPage } from './audit-page';
import { KeysPage } from './keys-page';
import { KeyPage } from './key-page';
import { WebhooksPage } from './webhooks-page';
import { ChangePasswordDialog } from './passwords';
import { SignIn } from './sign-in';
import { resume, SESSION_ENDED, signOut, whenSessionEnds, type User } from './session';
import { UsersPage } from './users-page';

type Route = 'keys' | 'audit' | 'users' | 'webhooks';
/** Client-side routes under /console/: the service answers every one of them with this page. */
const PATHS: Record<Route, string> = { keys: '/console/', audit: '/console/audit', users: '/console/users', webhooks: '/console/webhooks' };
const TITLES: Record<Route, string> = { keys: 'API keys', audit: 'Audit log', users: 'Users', webhooks: 'Webhooks' };
const ADMIN_ONLY: Partial<Record<Route, string>> = {
  audit: 'The audit log is shown to admins only.',
  users: 'Users are managed by admins only.',
  webhooks: 'Webhooks are shown to admins only.',
};

/** A page of the console: one of the routes, or one key's page (/console/keys/{appname}), which belongs to the keys. */
type Page = Route | { key: string };
const KEY_PATH = '/console/keys/';

const routeOf = (path: string): Page => {
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed.startsWith(KEY_PATH) && trimmed.length > KEY_PATH.length) {
    try {
      return { key: decodeURIComponent(trimmed.slice(KEY_PATH.length)) };
    } catch {
      return 'keys';
    }
  }
  return (Object.keys(PATHS) as Route[]).find((route) => route !== 'keys' && PATHS[route] === trimmed) ?? 'keys';
};
const pathOf = (page: Page) => (typeof page === 'object' ? `${KEY_PATH}${encodeURIComponent(page.key)}` : PATHS[page]);
/** The route a page is under: a key's page is the keys'. */
const sectionOf = (page: Page): Route => (typeof page === 'object' ? 'keys' : page);

/** The open page is the path; its filters are the query, which each page keeps itself (url-state.ts). */
function useRoute(): [Page, (to: Page) => void] {
  const [route, setRoute] = useState<Page>(routeOf(location.pathname));
  useEffect(() => {
    const back = () => setRoute(routeOf(location.pathname));
    addEventListener('popstate', back);
    return () => removeEventListener('popstate', back);
  }, []);
  const go = (to: Page) => {
    const path = pathOf(to);
    if (location.pathname !== path || location.search) history.pushState(null, '', path);
    setRoute(to);
  };
  return [route, go];
}

/** A fault in a page's code shows a message and a way back, never a blank page. */
class PageFault extends Component<{ children: ComponentChildren }, { failed: boolean }> {
  override state = { failed: false };

  override componentDidCatch(error: unknown) {
    console.error('console page failed', error instanceof Error ? error.name : 'unknown error');
    this.setState({ failed: true });
  }

  override render() {
    if (!this.state.failed) return this.props.children;
    return (
      <div class="banner banner-error" role="alert">
        <span>This page failed to show. Your session is still open.</span>
        <button type="button" class="button" onClick={() => this.setState({ failed: false })}>
          Try again
        </button>
      </div>
    );
  }
}

export function App() {
  const [user, setUser] = useState<User>();
  // A reload resumes the session the cookie holds, if any, before sign-in is offered.
  const [resuming, setResuming] = useState(true);
  const [notice, setNotice] = useState<string>();
  const [changingPassword, setChangingPassword] = useState(false);
  const [banner, setBanner] = useState<string>();
  const [route, go] = useRoute();

  useEffect(() => {
    whenSessionEnds((message) => {
      setUser(undefined);
      setNotice(message);
    });
    resume()
      .then((resumed) => {
        if (resumed === 'ended') setNotice(SESSION_ENDED);
        else if (resumed) setUser(resumed);
      })
      .catch((err: unknown) => setNotice(describe(err)))
      .finally(() => setResuming(false));
  }, []);

  useEffect(() => {
    document.title = `${resuming || !user ? 'Sign in' : typeof route === 'object' ? route.key : TITLES[route]} · API key console`;
  }, [user, route, resuming]);

  if (resuming) {
    return (
      <main class="signin" aria-busy="true">
        <p class="muted" role="status">
          Loading…
        </p>
      </main>
    );
  }

  if (!user) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(signedIn) => {
          setNotice(undefined);
          setBanner(undefined);
          setUser(signedIn);
        }}
      />
    );
  }

  const admin = user.role === 'admin';
  const section = sectionOf(route);
  const link = (to: Route) => (
    <a
      href={PATHS[to]}
      class={section === to ? 'nav-link nav-link-current' : 'nav-link'}
      aria-current={route === to ? 'page' : undefined}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        go(to);
      }}
    >
      {TITLES[to]}
    </a>
  );
  const refused = ADMIN_ONLY[section];

  return (
    <div class="shell">
      <header class="topbar">
        <span class="brand">API key console</span>
        <nav class="nav" aria-label="Main">
          {link('keys')}
          {admin && link('users')}
          {admin && link('audit')}
          {admin && link('webhooks')}
        </nav>
        <div class="account">
          <span class="who">
            <span class="mono">{user.username}</span> <span class={`role role-${user.role ?? 'none'}`}>{user.role ?? 'no role'}</span>
          </span>
          <button type="button" class="button button-small" onClick={() => setChangingPassword(true)}>
            Change password
          </button>
          <button
            type="button"
            class="button button-small"
            onClick={async () => {
              // Revoked first, so the refresh token is dead by the time the sign-in screen shows.
              await signOut();
              setUser(undefined);
              setNotice('You signed out.');
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main class="content">
        {banner && (
          <p class="banner banner-success" role="status">
            {banner}
          </p>
        )}
        <PageFault>
          {refused && !admin ? (
            <p class="banner banner-error" role="alert">
              {refused}
            </p>
          ) : route === 'audit' ? (
            <AuditPage />
          ) : route === 'users' ? (
            <UsersPage user={user} />
          ) : route === 'webhooks' ? (
            <WebhooksPage />
          ) : typeof route === 'object' ? (
            <KeyPage user={user} appname={route.key} onBack={() => go('keys')} />
          ) : (
            <KeysPage user={user} onOpenKey={(appname) => go({ key: appname })} />
          )}
        </PageFault>
      </main>
      {changingPassword && (
        <ChangePasswordDialog
          onClose={() => setChangingPassword(false)}
          onChanged={() => {
            setChangingPassword(false);
            setBanner('Your password was changed. Your other sessions ended; this one stays signed in.');
          }}
        />
      )}
    </div>
  );
}
