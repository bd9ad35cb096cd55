import { useEffect, useState, type ReactNode } from 'react';
import { api } from '../api.js';
import { Link } from '../router.js';
import type { User } from '../types.js';

let currentUser: Promise<User> | null = null;

/** The signed-in user, fetched once per page load (a 401 redirects to /login). */
export function useUser(): User | null {
  const [user, setUser] = useState<User | null>(null);
  useEffect(() => {
    currentUser ??= api.get('/api/auth/me');
    currentUser.then(setUser, () => (currentUser = null));
  }, []);
  return user;
}

async function logout() {
  await api.post('/api/auth/logout').catch(() => undefined);
  location.assign('/login');
}

export function Layout({ title, actions, children }: { title: ReactNode; actions?: ReactNode; children: ReactNode }) {
  const user = useUser();
  return (
    <div className="layout">
      <header className="topbar">
        <Link href="/" className="brand">
          Versa
        </Link>
        <div className="crumb">{title}</div>
        <div className="spacer" />
        {actions}
        <Link href="/queue" className="topbar-link">
          My queue
        </Link>
        {user && <span className="muted">{user.display_name || user.email}</span>}
        <button className="ghost" onClick={logout}>
          Log out
        </button>
      </header>
      <main className="page">{children}</main>
    </div>
  );
}

export function ErrorBanner({ message, onClose, kind = 'error' }: { message: string | null; onClose?: () => void; kind?: 'error' | 'info' }) {
  if (!message) return null;
  return (
    <div className={`banner ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      <span>{message}</span>
      {onClose && (
        <button className="ghost" onClick={onClose} aria-label="Dismiss">
          ×
        </button>
      )}
    </div>
  );
}
