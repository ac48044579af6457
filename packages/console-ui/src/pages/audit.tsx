import { useEffect, useState } from 'preact/hooks';
import { api, message, query } from '../api.js';
import { time } from '../format.js';
import { useReport } from '../status.js';
import type { PageProps } from './types.js';

interface AuditEntry {
  auditId: string;
  actor: string;
  action: string;
  target: string;
  at: number;
  forced: string | null;
}

/** The audit trail of the last day (GET /v1/audit, a bounded scan per page), filtered by actor or action. */
export function AuditPage(_props: PageProps) {
  const report = useReport();
  const [actor, setActor] = useState('');
  const [action, setAction] = useState('');
  const [page, setPage] = useState<{ entries: AuditEntry[]; next: string | null } | undefined>(undefined);
  const load = async (after?: string) => {
    try {
      const q = query({ actor: actor.trim(), action: action.trim(), since: Date.now() - 24 * 3600_000, limit: 100, after });
      const r = await api<{ records: AuditEntry[]; next: string | null }>('GET', `/v1/audit${q}`);
      setPage({ entries: r.records, next: r.next });
    } catch (e) {
      report(`Reading the audit failed: ${message(e)}`, 'error');
    }
  };
  useEffect(() => void load(), []);
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit</h1>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void load();
        }}
      >
        <label class="field">
          Actor
          <input value={actor} onInput={(e) => setActor((e.currentTarget as HTMLInputElement).value)} data-testid="audit-actor" />
        </label>
        <label class="field">
          Action (ban, ban.lift…)
          <input value={action} onInput={(e) => setAction((e.currentTarget as HTMLInputElement).value)} data-testid="audit-action" />
        </label>
        <button type="submit">Filter</button>
      </form>
      <table data-testid="audit-table">
        <caption>Changes in the last 24 hours, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
          </tr>
        </thead>
        <tbody>
          {(page?.entries ?? []).map((a) => (
            <tr key={a.auditId} data-testid="audit-row">
              <td>{time(a.at)}</td>
              <td>{a.actor}</td>
              <td>
                {a.action}
                {a.forced ? ' (forced)' : ''}
              </td>
              <td class="break">{a.target}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {page?.next && (
        <button type="button" class="secondary" onClick={() => load(page.next ?? undefined)}>
          Next page
        </button>
      )}
      {page && page.entries.length === 0 && <p class="muted">No change recorded in the range.</p>}
    </section>
  );
}
