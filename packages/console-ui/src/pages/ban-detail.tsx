import { useEffect, useState } from 'preact/hooks';
import { api, enc, message } from '../api.js';
import { time } from '../format.js';
import type { Ban } from './types.js';

interface HistoryEntry {
  action: string;
  at: number;
  actor: string | null;
  ban: Ban;
}

/** A ban's evidence (aggregator bans) and its history of bans, lifts and expiries. */
export function BanDetail({ subject }: { subject: string }) {
  const [ban, setBan] = useState<Ban | undefined>(undefined);
  const [history, setHistory] = useState<HistoryEntry[] | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    api<Ban>('GET', `/v1/bans/${enc(subject)}`).then(setBan, (e) => setError(message(e)));
    api<{ entries: HistoryEntry[] }>('GET', `/v1/bans/${enc(subject)}/history?limit=50`).then(
      (r) => setHistory(r.entries),
      (e) => setError(message(e)),
    );
  }, [subject]);
  const list = (title: string, items: { value: string; count: number }[]) =>
    items.length > 0 && (
      <p>
        <strong>{title}:</strong> {items.map((i) => `${i.value} (${i.count})`).join(', ')}
      </p>
    );
  return (
    <div class="detail" data-testid="ban-detail">
      {error && <p class="error">{error}</p>}
      {ban && (
        <>
          <p>
            Started {time(ban.startedAt)}, expires {time(ban.expiresAt)}; {ban.evidenceCount} requests in {ban.windowSeconds}s; escalation level {ban.escalationLevel}; answers {ban.httpStatus}
            {ban.createdBy ? `; placed by ${ban.createdBy}` : ''}.
          </p>
          {ban.evidence ? (
            <>
              <p>
                Evidence: {ban.evidence.sampledEvents} sampled requests from {time(ban.evidence.firstEventAt)} to {time(ban.evidence.lastEventAt)}.
              </p>
              {list('Paths', ban.evidence.paths)}
              {list('Methods', ban.evidence.methods)}
              {list('Statuses', ban.evidence.statuses)}
              {list('User agents', ban.evidence.userAgents)}
              {list('Edges', ban.evidence.edges)}
            </>
          ) : (
            <p class="muted">No evidence recorded (manual bans have none).</p>
          )}
        </>
      )}
      <h3>History</h3>
      {history === undefined ? (
        <p class="muted">Reading the history…</p>
      ) : history.length === 0 ? (
        <p class="muted">No history recorded.</p>
      ) : (
        <ul>
          {history.map((h, i) => (
            <li key={i}>
              {time(h.at)}: {h.action}
              {h.actor ? ` by ${h.actor}` : ''} ({h.ban.policyId}, until {time(h.ban.expiresAt)})
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
