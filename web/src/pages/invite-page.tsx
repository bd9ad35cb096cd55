import { useEffect, useState, type FormEvent } from 'react';
import { api } from '../api.js';
import type { ResponseOf } from '../types.js';

type Preview = ResponseOf<'/api/invitations/{token}', 'get'>;

/** The page an invitation link opens: choose a password, and the account is made and joins the project. */
export function InvitePage({ token }: { token: string }) {
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api.get('/api/invitations/{token}', { path: { token } }).then(setPreview, (e) => setError((e as Error).message));
  }, [token]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const out = await api.post('/api/invitations/{token}/accept', { path: { token }, body: {
        password,
        ...(name.trim() ? { display_name: name.trim() } : {}),
      } });
      location.assign(`/projects/${out.project_id}`);
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };

  return (
    <div className="login-page">
      <form className="card login-card" onSubmit={submit} aria-label="Accept invitation">
        <h1>Versa</h1>
        {error && <p className="error" role="alert">{error}</p>}
        {preview ? (
          <>
            <p>
              You are invited to <b>{preview.project_name}</b> as <b>{preview.role}</b>.
            </p>
            <label>
              Email
              <input value={preview.email} readOnly name="email" />
            </label>
            <label>
              Your name
              <input value={name} onChange={(e) => setName(e.target.value)} name="display_name" placeholder="optional" />
            </label>
            <label>
              Choose a password (8 characters or more)
              <input type="password" minLength={8} required value={password} onChange={(e) => setPassword(e.target.value)} name="password" />
            </label>
            <button type="submit" className="primary" disabled={busy}>
              Create account and join
            </button>
            <p className="muted small">The link works once and expires {new Date(preview.expires_at).toLocaleString()}.</p>
          </>
        ) : (
          !error && <p className="muted">Checking the invitation…</p>
        )}
      </form>
    </div>
  );
}
