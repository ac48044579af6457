import { useState } from 'preact/hooks';
import { api, message, type SessionInfo } from '../api.js';

/** Exchanges an API token for a session: the token goes to the server once and is not kept by the page. */
export function SignIn({ onSignedIn }: { onSignedIn(s: SessionInfo): void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('token') as HTMLInputElement;
    setBusy(true);
    setError('');
    try {
      const session = await api<SessionInfo>('POST', '/console/session', { token: input.value.trim() });
      input.value = '';
      onSignedIn(session);
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin" data-testid="page-signin">
      <h1>Sign in to the banstream console</h1>
      <form data-testid="signin-form" onSubmit={submit}>
        <label class="field" for="signin-token">
          API token
          <input id="signin-token" name="token" type="password" autocomplete="off" required data-testid="signin-token" />
        </label>
        <p class="muted">A token from `banstream token new`, or the one `npm start` wrote in .stack/. Your role is the token's.</p>
        <button type="submit" data-testid="signin-submit" disabled={busy}>
          Sign in
        </button>
        <p class="error" role="alert" data-testid="signin-error">
          {error}
        </p>
      </form>
    </main>
  );
}
