import { useEffect, useState } from 'preact/hooks';
import { api, enc, message } from '../api.js';
import { time } from '../format.js';
import { useReport } from '../status.js';
import { canWrite, type PageProps } from './types.js';

interface Entry {
  entry: string;
  reason: string;
  addedBy: string;
  addedAt: number;
  expiresAt: number | null;
  expired: boolean;
}

/** The allowlist: entries that win over every ban and limit; add with a reason and an optional expiry, remove. */
export function AllowlistPage({ session }: PageProps) {
  const report = useReport();
  const [entries, setEntries] = useState<Entry[] | undefined>(undefined);
  const [reload, setReload] = useState(0);
  const [formError, setFormError] = useState('');
  useEffect(() => {
    api<{ entries: Entry[] }>('GET', '/v1/allowlist').then(
      (r) => setEntries(r.entries),
      (e) => report(`Reading the allowlist failed: ${message(e)}`, 'error'),
    );
  }, [reload]);

  const add = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    setFormError('');
    try {
      const ttl = value('ttl');
      const added = await api<Entry>('POST', '/v1/allowlist', { entry: value('entry'), reason: value('reason'), ...(ttl ? { ttl } : {}) });
      report(`Allowlisted ${added.entry}.`);
      form.reset();
      setReload((n) => n + 1);
    } catch (err) {
      setFormError(message(err));
    }
  };
  const remove = async (entry: string) => {
    try {
      await api('DELETE', `/v1/allowlist/${enc(entry)}`);
      report(`Removed ${entry} from the allowlist.`);
      setReload((n) => n + 1);
    } catch (e) {
      report(`Removing ${entry} failed: ${message(e)}`, 'error');
    }
  };

  return (
    <section aria-labelledby="allow-title">
      <h1 id="allow-title">Allowlist</h1>
      {canWrite(session) && (
        <>
          <h2>Add an entry</h2>
          <form class="row" data-testid="allow-form" onSubmit={add}>
            <label class="field">
              Entry (address, network, user:id)
              <input name="entry" required maxLength={512} data-testid="allow-entry" />
            </label>
            <label class="field">
              Reason
              <input name="reason" required maxLength={1000} data-testid="allow-reason" />
            </label>
            <label class="field">
              Expires after (optional)
              <input name="ttl" pattern="[1-9][0-9]*(ms|s|m|h|d)" placeholder="30d" data-testid="allow-ttl" />
            </label>
            <button type="submit" data-testid="allow-submit">
              Add
            </button>
          </form>
          <p class="error" role="alert" data-testid="allow-form-error">
            {formError}
          </p>
        </>
      )}
      <table data-testid="allow-table">
        <caption>Allowlist entries</caption>
        <thead>
          <tr>
            <th scope="col">Entry</th>
            <th scope="col">Reason</th>
            <th scope="col">Added</th>
            <th scope="col">Expires</th>
            {canWrite(session) && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {(entries ?? []).map((e) => (
            <tr key={e.entry} data-testid="allow-row" data-entry={e.entry}>
              <td class="break">{e.entry}</td>
              <td class="break">{e.reason}</td>
              <td>
                {time(e.addedAt)} by {e.addedBy}
              </td>
              <td>{e.expiresAt === null ? 'never' : `${time(e.expiresAt)}${e.expired ? ' (expired)' : ''}`}</td>
              {canWrite(session) && (
                <td>
                  <button type="button" class="danger" data-testid="allow-remove" onClick={() => remove(e.entry)}>
                    Remove
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {entries && entries.length === 0 && <p class="muted">The allowlist is empty.</p>}
    </section>
  );
}
