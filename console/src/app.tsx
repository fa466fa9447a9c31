import { Component, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AuditPage } from './audit-page';
import { KeysPage } from './keys-page';
import { WebhooksPage } from './webhooks-page';
import { SignIn } from './sign-in';
import { signOut, whenSessionEnds, type User } from './session';

const BASE = '/console/';
const AUDIT = '/console/audit';
const WEBHOOKS = '/console/webhooks';

type Route = 'keys' | 'audit' | 'webhooks';
const PATH_OF: Record<Route, string> = { keys: BASE, audit: AUDIT, webhooks: WEBHOOKS };
const routeOf = (path: string): Route => {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === AUDIT ? 'audit' : trimmed === WEBHOOKS ? 'webhooks' : 'keys';
};

/** Client-side routes under /console/: the service answers every one of them with this page. */
function useRoute(): [Route, (to: Route) => void] {
  const [route, setRoute] = useState<Route>(routeOf(location.pathname));
  useEffect(() => {
    const back = () => setRoute(routeOf(location.pathname));
    addEventListener('popstate', back);
    return () => removeEventListener('popstate', back);
  }, []);
  const go = (to: Route) => {
    const path = PATH_OF[to];
    if (location.pathname !== path) history.pushState(null, '', path);
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
  const [notice, setNotice] = useState<string>();
  const [route, go] = useRoute();

  useEffect(() => {
    whenSessionEnds((message) => {
      setUser(undefined);
      setNotice(message);
    });
  }, []);

  useEffect(() => {
    const page = { keys: 'API keys', audit: 'Audit log', webhooks: 'Webhooks' }[route];
    document.title = `${user ? page : 'Sign in'} · API key console`;
  }, [user, route]);

  if (!user) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(signedIn) => {
          setNotice(undefined);
          setUser(signedIn);
        }}
      />
    );
  }

  const admin = user.role === 'admin';
  const link = (to: Route, label: string) => (
    <a
      href={PATH_OF[to]}
      class={route === to ? 'nav-link nav-link-current' : 'nav-link'}
      aria-current={route === to ? 'page' : undefined}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        go(to);
      }}
    >
      {label}
    </a>
  );

  return (
    <div class="shell">
      <header class="topbar">
        <span class="brand">API key console</span>
        <nav class="nav" aria-label="Main">
          {link('keys', 'API keys')}
          {admin && link('audit', 'Audit log')}
          {admin && link('webhooks', 'Webhooks')}
        </nav>
        <div class="account">
          <span class="who">
            <span class="mono">{user.username}</span> <span class={`role role-${user.role ?? 'none'}`}>{user.role ?? 'no role'}</span>
          </span>
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
        <PageFault>
          {route !== 'keys' && !admin ? (
            <p class="banner banner-error" role="alert">
              {route === 'audit' ? 'The audit log is' : 'Webhooks are'} shown to admins only.
            </p>
          ) : route === 'audit' ? (
            <AuditPage />
          ) : route === 'webhooks' ? (
            <WebhooksPage />
          ) : (
            <KeysPage user={user} />
          )}
        </PageFault>
      </main>
    </div>
  );
}
