// Signing in: the account's API token, checked against the API before it is kept, by reading
// what it may do (GET /v3/account/token, which any token may read).
import { useState } from 'preact/hooks';
import { createApi, type ApiToken } from './api';
import { TextField } from './text-field';

export function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: (token: string, own: ApiToken) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const own = await createApi(token.trim(), () => {}).currentToken();
      onSignedIn(token.trim(), own);
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Webhooks dashboard</h1>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={(event) => void submit(event)} method="post" action="#" autoComplete="off">
        <TextField
          id="token"
          label="Account API token"
          hint="Kept in this tab only, and forgotten when you sign out or close it."
          name="token"
          concealed
          required
          autoFocus
          value={token}
          onValue={setToken}
          error={error}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
