import { useEffect, useState } from 'preact/hooks';
import { api, message } from '../api.js';
import { BarChart, TimeBars } from '../charts/bar-chart.js';
import { histogram, num, percent, time } from '../format.js';

interface Outcome {
  policyId: string;
  version?: number;
  mode: string;
  action: string;
  matched: number;
  bans: { total: number; subjects: number; list: { subject: string; startedAt: number; expiresAt: number; evidenceCount: number; refused: number }[] };
  overThreshold: { total: number; list: { subject: string; peakCount: number; requestsOver: number; refused: number }[] };
  affected: { requests: number; requestShare: number; clients: number; clientShare: number };
  topCountries: { name: string; requests: number }[];
  topPrefixes: { name: string; requests: number }[];
}

interface Report {
  range: { from: number; to: number };
  events: number;
  clients: number;
  candidate: Outcome;
  active?: Outcome;
  comparison?: {
    bannedOnlyByCandidate: string[];
    bannedOnlyByActive: string[];
    bannedByBoth: number;
    overOnlyByCandidate: string[];
    overOnlyByActive: string[];
    affectedRequestsDelta: number;
  };
}

interface Job {
  id: string;
  state: 'running' | 'done' | 'failed';
  progress: { records: number; total: number };
  result?: Report;
  error?: string;
}

const RANGES = ['15m', '1h', '6h', '24h'];

/** A backtest of the edited policy over a chosen range (POST /v1/backtests), its progress while it runs, then its report drawn. */
export function Backtest({ policy }: { policy: Record<string, unknown> | undefined }) {
  const [range, setRange] = useState('1h');
  const [job, setJob] = useState<Job | undefined>(undefined);
  const [error, setError] = useState('');

  // One job is watched at a time, twice a second, and only while it runs.
  useEffect(() => {
    if (job?.state !== 'running') return;
    const timer = setTimeout(() => {
      api<Job>('GET', `/v1/backtests/${job.id}`).then(setJob, (e) => setError(message(e)));
    }, 500);
    return () => clearTimeout(timer);
  }, [job]);

  const start = async () => {
    if (!policy) return;
    setError('');
    try {
      setJob(await api<Job>('POST', '/v1/backtests', { policy, from: range }));
    } catch (e) {
      setError(message(e));
    }
  };
  return (
    <section aria-labelledby="backtest-title">
      <h2 id="backtest-title">Backtest</h2>
      <p class="muted">Replays the retained events through the policy in the editor, and compares it with the stored version of the same id.</p>
      <div class="filters">
        <label class="field">
          Over the last
          <select value={range} onChange={(e) => setRange((e.currentTarget as HTMLSelectElement).value)} data-testid="backtest-range">
            {RANGES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <button type="button" data-testid="backtest-start" disabled={!policy || job?.state === 'running'} onClick={start}>
          Start backtest
        </button>
      </div>
      {!policy && <p class="muted">Write a valid policy in the editor to backtest it.</p>}
      {job && (
        <div>
          <label for="backtest-progress">{job.state === 'running' ? 'Reading the events…' : job.state === 'done' ? 'Done' : 'Failed'}</label>{' '}
          <progress
            id="backtest-progress"
            data-testid="backtest-progress"
            value={job.state === 'running' ? job.progress.records : 1}
            max={job.state === 'running' ? Math.max(1, job.progress.total) : 1}
          />{' '}
          <span class="muted">
            {num(job.progress.records, 0)} of {num(job.progress.total, 0)} records
          </span>
        </div>
      )}
      {(error || job?.state === 'failed') && (
        <p class="error" data-testid="backtest-error">
          {error || job?.error}
        </p>
      )}
      {job?.state === 'done' && job.result && <ReportView report={job.result} />}
    </section>
  );
}

function ReportView({ report }: { report: Report }) {
  const c = report.candidate;
  const hhmm = (x: number) => time(x).slice(5, 16);
  return (
    <div data-testid="backtest-report">
      <h3>Report: {c.policyId}</h3>
      <p>
        {num(report.events, 0)} events from {num(report.clients, 0)} clients between {time(report.range.from)} and {time(report.range.to)}. The policy matched {num(c.matched, 0)} of them.
      </p>
      <div class="cards">
        <div class="card">
          <div class="label">Bans</div>
          <div class="value">{num(c.bans.total, 0)}</div>
        </div>
        <div class="card">
          <div class="label">Subjects banned</div>
          <div class="value">{num(c.bans.subjects, 0)}</div>
        </div>
        <div class="card">
          <div class="label">Refused share of traffic</div>
          <div class="value" data-testid="backtest-refused-share">
            {percent(c.affected.requestShare)}
          </div>
        </div>
        <div class="card">
          <div class="label">Clients affected</div>
          <div class="value">{percent(c.affected.clientShare)}</div>
        </div>
      </div>
      <h4>Bans over time</h4>
      <TimeBars
        label={`Bans the policy would have placed over time: ${c.bans.total} in all`}
        buckets={histogram(
          c.bans.list.map((b) => b.startedAt),
          report.range.from,
          report.range.to,
          30,
        )}
        formatX={hhmm}
        testId="backtest-bans-chart"
      />
      <h4>Subjects it would have banned</h4>
      <table data-testid="backtest-subjects">
        <caption>First {Math.min(20, c.bans.list.length)} bans</caption>
        <thead>
          <tr>
            <th scope="col">Subject</th>
            <th scope="col">From</th>
            <th scope="col" class="num">
              Evidence
            </th>
            <th scope="col" class="num">
              Refused requests
            </th>
          </tr>
        </thead>
        <tbody>
          {c.bans.list.slice(0, 20).map((b, i) => (
            <tr key={i}>
              <td class="break">{b.subject}</td>
              <td>{time(b.startedAt)}</td>
              <td class="num">{num(b.evidenceCount, 0)}</td>
              <td class="num">{num(b.refused, 0)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {c.overThreshold.total > 0 && (
        <p>
          {num(c.overThreshold.total, 0)} subjects went over the threshold{c.action === 'ban' ? ' while not banned' : ''}.
        </p>
      )}
      <h4>Top countries</h4>
      <BarChart label="Requests of the affected traffic by country" bars={c.topCountries.slice(0, 10).map((t) => ({ label: t.name, value: t.requests }))} testId="backtest-top-countries" />
      <h4>Top prefixes</h4>
      <BarChart label="Requests of the affected traffic by network prefix" bars={c.topPrefixes.slice(0, 10).map((t) => ({ label: t.name, value: t.requests }))} testId="backtest-top-prefixes" />
      <h4>Against the stored version</h4>
      <div data-testid="backtest-diff">
        {report.comparison && report.active ? (
          <ul>
            <li>
              Stored version {report.active.version ?? ''}: {num(report.active.bans.total, 0)} bans, {percent(report.active.affected.requestShare)} of requests refused.
            </li>
            <li>Banned by both: {num(report.comparison.bannedByBoth, 0)}.</li>
            <li>
              Only by the edited policy ({report.comparison.bannedOnlyByCandidate.length}): {report.comparison.bannedOnlyByCandidate.slice(0, 20).join(', ') || 'none'}.
            </li>
            <li>
              Only by the stored version ({report.comparison.bannedOnlyByActive.length}): {report.comparison.bannedOnlyByActive.slice(0, 20).join(', ') || 'none'}.
            </li>
            <li>Refused requests, edited minus stored: {num(report.comparison.affectedRequestsDelta, 0)}.</li>
          </ul>
        ) : (
          <p class="muted">No stored policy with this id: nothing to compare.</p>
        )}
      </div>
    </div>
  );
}
