import { useEffect, useRef, useState } from 'preact/hooks';
import { api, enc, message, query, takePrefetched } from '../api.js';
import { span, time } from '../format.js';
import { useReport } from '../status.js';
import { BanDetail } from './ban-detail.js';
import { canWrite, type Ban, type PageProps } from './types.js';

const PAGE_SIZE = 50;

interface Filters {
  subject: string;
  scope: string;
  policy: string;
  origin: string;
}

interface BansAnswer {
  bans: Ban[];
  total: number;
  next: string | null;
}

const NO_FILTERS: Filters = { subject: '', scope: '', policy: '', origin: '' };

function bansPath(filters: Filters, cursor: string | undefined): string {
  return `/v1/bans${query({ subject: filters.subject.trim(), scope: filters.scope.trim(), policy: filters.policy.trim(), origin: filters.origin, after: cursor, limit: PAGE_SIZE })}`;
}

/** What the page asks first: main.tsx starts it with the session check when the page is opened by its address. */
export const FIRST_BANS_PAGE = bansPath(NO_FILTERS, undefined);

/** Bans: searched and paged on the server (GET /v1/bans), ban by hand, lift, extend, and each ban's evidence and history. */
export function BansPage({ session }: PageProps) {
  const report = useReport();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  /** Cursors of the pages before this one (paging is forward on the server; "first" resets). */
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  // Rows that arrived with the session check are drawn in the page's first render.
  const [result, setResult] = useState<BansAnswer | undefined>(() => takePrefetched<BansAnswer>(FIRST_BANS_PAGE));
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [reload, setReload] = useState(0);
  const [formError, setFormError] = useState('');
  const seq = useRef(0);
  const writer = canWrite(session);

  useEffect(() => {
    const mine = ++seq.current;
    if (mine === 1 && result !== undefined) return;
    // The first page at once; later searches wait for a pause in the typing.
    const timer = setTimeout(
      () => {
        api<BansAnswer>('GET', bansPath(filters, cursor)).then(
          (r) => mine === seq.current && setResult(r),
          (e) => mine === seq.current && report(`Search failed: ${message(e)}`, 'error'),
        );
      },
      mine === 1 ? 0 : 200,
    );
    return () => clearTimeout(timer);
  }, [filters, cursor, reload]);

  const set = (k: keyof Filters) => (e: Event) => {
    setCursor(undefined);
    setFilters({ ...filters, [k]: (e.currentTarget as HTMLInputElement).value });
  };
  const lift = async (subject: string) => {
    try {
      await api('DELETE', `/v1/bans/${enc(subject)}`);
      report(`Lifted the ban on ${subject}.`);
      setReload((n) => n + 1);
    } catch (e) {
      report(`Lifting ${subject} failed: ${message(e)}`, 'error');
    }
  };
  const extend = async (ban: Ban, duration: string) => {
    try {
      await api('POST', '/v1/bans', { subject: ban.subject, duration, reason: ban.reason, status: ban.httpStatus === 429 ? 429 : 403 });
      report(`The ban on ${ban.subject} now lasts ${duration} from now.`);
      setReload((n) => n + 1);
    } catch (e) {
      report(`Extending ${ban.subject} failed: ${message(e)}`, 'error');
    }
  };
  const banByHand = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    setFormError('');
    try {
      const ban = await api<Ban>('POST', '/v1/bans', { subject: value('subject'), duration: value('duration'), reason: value('reason') });
      report(`Banned ${ban.subject} until ${time(ban.expiresAt)}.`);
      form.reset();
      setReload((n) => n + 1);
    } catch (err) {
      setFormError(message(err));
    }
  };

  return (
    <section aria-labelledby="bans-title">
      <h1 id="bans-title">Bans</h1>
      {writer && (
        <>
          <h2>Ban by hand</h2>
          <form class="row" data-testid="ban-form" onSubmit={banByHand}>
            <label class="field">
              Subject (address, network or scope:value)
              <input name="subject" required maxLength={4096} data-testid="ban-subject" placeholder="203.0.113.7" />
            </label>
            <label class="field">
              Duration
              <input name="duration" required pattern="[1-9][0-9]*(ms|s|m|h|d)" data-testid="ban-duration" placeholder="1h" />
            </label>
            <label class="field">
              Reason
              <input name="reason" required maxLength={1000} data-testid="ban-reason" />
            </label>
            <button type="submit" data-testid="ban-submit">
              Ban
            </button>
          </form>
          <p class="error" role="alert" data-testid="ban-form-error">
            {formError}
          </p>
        </>
      )}

      <h2>Search</h2>
      <div class="filters" data-testid="bans-search">
        <label class="field">
          Subject starts with
          <input type="search" value={filters.subject} onInput={set('subject')} maxLength={512} data-testid="bans-filter-subject" />
        </label>
        <label class="field">
          Scope
          <input value={filters.scope} onInput={set('scope')} placeholder="ip, cidr, user…" data-testid="bans-filter-scope" />
        </label>
        <label class="field">
          Policy
          <input value={filters.policy} onInput={set('policy')} data-testid="bans-filter-policy" />
        </label>
        <label class="field">
          Origin
          <select value={filters.origin} onChange={set('origin')} data-testid="bans-filter-origin">
            <option value="">any</option>
            <option value="aggregator">aggregator</option>
            <option value="manual">manual</option>
          </select>
        </label>
      </div>
      <div class="pager">
        <span>
          <span data-testid="bans-total">{result?.total ?? '…'}</span> matching bans
        </span>
        <button type="button" class="secondary" data-testid="bans-first" disabled={cursor === undefined} onClick={() => setCursor(undefined)}>
          First page
        </button>
        <button type="button" class="secondary" data-testid="bans-next" disabled={!result?.next} onClick={() => result?.next && setCursor(result.next)}>
          Next page
        </button>
      </div>
      <table data-testid="bans-table">
        <caption>Active bans, in subject order</caption>
        <thead>
          <tr>
            <th scope="col">Subject</th>
            <th scope="col">Policy</th>
            <th scope="col">Origin</th>
            <th scope="col">Reason</th>
            <th scope="col">Expires</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(result?.bans ?? []).map((b) => (
            <BanRow key={b.subject} ban={b} writer={writer} open={open === b.subject} onToggle={() => setOpen(open === b.subject ? undefined : b.subject)} onLift={lift} onExtend={extend} />
          ))}
        </tbody>
      </table>
      {result && result.bans.length === 0 && <p class="muted">No ban matches.</p>}
    </section>
  );
}

function BanRow({ ban, writer, open, onToggle, onLift, onExtend }: { ban: Ban; writer: boolean; open: boolean; onToggle(): void; onLift(s: string): void; onExtend(b: Ban, d: string): void }) {
  const [extendBy, setExtendBy] = useState('1h');
  return (
    <>
      <tr data-testid="ban-row" data-subject={ban.subject}>
        <td class="break">{ban.subject}</td>
        <td>{ban.policyId}</td>
        <td>{ban.origin}</td>
        <td class="break" data-testid="ban-reason-text">
          {ban.reason}
        </td>
        <td>
          <span title={time(ban.expiresAt)}>in {span(ban.expiresAt - Date.now())}</span>
        </td>
        <td>
          <button type="button" class="secondary" data-testid="ban-details" aria-expanded={open} onClick={onToggle}>
            Details
          </button>{' '}
          {writer && (
            <>
              <button type="button" class="danger" data-testid="ban-lift" onClick={() => onLift(ban.subject)}>
                Lift
              </button>{' '}
              <label>
                <span class="muted"> for </span>
                <select value={extendBy} onChange={(e) => setExtendBy((e.currentTarget as HTMLSelectElement).value)} aria-label={`New duration for ${ban.subject}`} data-testid="ban-extend-duration">
                  {['1h', '6h', '24h', '7d'].map((d) => (
                    <option key={d} value={d}>
                      {d}
                    </option>
                  ))}
                </select>
              </label>{' '}
              <button type="button" class="secondary" data-testid="ban-extend" onClick={() => onExtend(ban, extendBy)}>
                Extend
              </button>
            </>
          )}
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={6}>
            <BanDetail subject={ban.subject} />
          </td>
        </tr>
      )}
    </>
  );
}
