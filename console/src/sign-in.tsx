import { useState } from 'preact/hooks';
import { ApiError, describe } from './api';
import { signIn, type User } from './session';

/** The sign-in screen; `notice` says why the user is here again (session ended, signed out). */
export function SignIn(props: { notice?: string; onSignedIn: (user: User) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const user = await signIn(username.trim(), password);
      setPassword('');
      props.onSignedIn(user);
    } catch (err) {
      setError(err instanceof ApiError && (err.status === 400 || err.status === 401) ? err.message : describe(err));
      setBusy(false);
    }
  };

  return (
    <main class="signin">
      {/* method="post": should the script ever fail to stop the submission, the password still stays out of the URL. */}
      <form class="signin-card" method="post" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">API key console</h1>
        <p class="muted">Sign in to manage API keys.</p>
        {props.notice && !error && (
          <p class="notice" role="status">
            {props.notice}
          </p>
        )}
        {error && (
          <p class="banner banner-error" role="alert">
            {error}
          </p>
        )}
        <div class="field">
          <label for="signin-username">Username</label>
          <input id="signin-username" name="username" autocomplete="username" required autofocus value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="signin-password">Password</label>
          <input id="signin-password" name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </div>
        <button type="submit" class="button button-primary button-block" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
