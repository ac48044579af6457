import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, dropPrefetched, message, useSession, type SessionInfo } from './api.js';
import { AlertsPage } from './pages/alerts.js';
import { AllowlistPage } from './pages/allowlist.js';
import { AuditPage } from './pages/audit.js';
import { BansPage } from './pages/bans.js';
import { OverviewPage } from './pages/overview.js';
import { PoliciesPage } from './pages/policies.js';
import { SignIn } from './pages/sign-in.js';
import { StatusContext } from './status.js';

const PAGES = [
  { id: 'overview', title: 'Overview', Page: OverviewPage },
  { id: 'bans', title: 'Bans', Page: BansPage },
  { id: 'policies', title: 'Policies', Page: PoliciesPage },
  { id: 'allowlist', title: 'Allowlist', Page: AllowlistPage },
  { id: 'alerts', title: 'Alerts', Page: AlertsPage },
  { id: 'audit', title: 'Audit', Page: AuditPage },
] as const;

function currentPage(): string {
  const id = location.hash.replace(/^#\/?/, '');
  return PAGES.some((p) => p.id === id) ? id : 'overview';
}

/** The console: the sign-in form without a session, else the frame (navigation, who, sign-out) and the page of the hash route. */
export function App() {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [page, setPage] = useState(currentPage);
  const [status, setStatus] = useState<{ text: string; kind: 'ok' | 'error' }>({ text: '', kind: 'ok' });
  const report = useCallback((text: string, kind: 'ok' | 'error' = 'ok') => setStatus({ text, kind }), []);
  useSession(session ?? undefined, () => setSession(null));

  useEffect(() => {
    api<SessionInfo>('GET', '/console/session').then(setSession, () => {
      dropPrefetched();
      setSession(null);
    });
    const onHash = () => {
      setPage(currentPage());
      // A result belongs to the page it was reported on.
      setStatus({ text: '', kind: 'ok' });
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    const title = PAGES.find((p) => p.id === page)?.title ?? '';
    document.title = session ? `${title} · banstream console` : 'Sign in · banstream console';
  }, [page, session]);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={setSession} />;

  const signOut = async () => {
    try {
      await api('DELETE', '/console/session');
    } catch (error) {
      report(`Sign-out failed: ${message(error)}`, 'error');
      return;
    }
    setSession(null);
  };
  const { Page } = PAGES.find((p) => p.id === page)!;
  return (
    <StatusContext.Provider value={report}>
      <header class="top">
        <p class="brand">banstream</p>
        <nav aria-label="Console pages">
          <ul>
            {PAGES.map((p) => (
              <li key={p.id}>
                <a href={`#/${p.id}`} data-testid={`nav-${p.id}`} aria-current={p.id === page ? 'page' : undefined}>
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span data-testid="whoami" data-role={session.role}>
            {session.name} ({session.role})
          </span>
          <button type="button" class="secondary" data-testid="signout" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main data-testid={`page-${page}`}>
        <p class={`status ${status.kind}`} role="status" data-testid="status-message">
          {status.text}
        </p>
        <Page session={session} />
      </main>
    </StatusContext.Provider>
  );
}
