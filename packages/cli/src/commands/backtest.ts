import type { BacktestReport, PolicyOutcome } from '@banstream/api';
import type { Command } from '../command.js';
import { text } from '../command.js';
import { CliError, EXIT } from '../exit-codes.js';
import { ProgressBar } from '../format/progress.js';
import { isoSeconds, table } from '../format/table.js';
import { readPolicies } from './policies.js';

type Outcome = PolicyOutcome;
type Report = BacktestReport;

interface Job {
  id: string;
  state: 'running' | 'done' | 'failed';
  progress: { records: number; total: number };
  result?: Report;
  error?: string;
}

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

function renderOutcome(o: Outcome, title: string): string[] {
  const lines = [`${title}: ${o.policyId}${o.version ? ` v${o.version}` : ''} (${o.action}, ${o.mode}); ${o.matched.toLocaleString('en-US')} matching requests`];
  lines.push(`  would refuse ${o.affected.requests.toLocaleString('en-US')} requests (${pct(o.affected.requestShare)}) from ${o.affected.clients} clients (${pct(o.affected.clientShare)})`);
  if (o.bans.total > 0) {
    lines.push(`  ${o.bans.total} ban(s) of ${o.bans.subjects} subject(s):`);
    lines.push(
      ...table(o.bans.list, [
        { header: 'SUBJECT', value: (b) => b.subject },
        { header: 'BANNED AT', value: (b) => isoSeconds(b.startedAt) },
        { header: 'UNTIL', value: (b) => isoSeconds(b.expiresAt) },
        { header: 'COUNT', value: (b) => String(b.evidenceCount), right: true },
        { header: 'LEVEL', value: (b) => String(b.escalationLevel), right: true },
        { header: 'REFUSED', value: (b) => String(b.refused), right: true },
      ])
        .split('\n')
        .map((l) => `    ${l}`),
    );
  }
  if (o.overThreshold.total > 0) {
    const what = o.action === 'throttle' ? 'throttled' : o.action === 'alert' ? 'alerted on' : 'over the rate threshold';
    lines.push(`  ${o.overThreshold.total} subject(s) ${what}:`);
    lines.push(
      ...table(o.overThreshold.list, [
        { header: 'SUBJECT', value: (s) => s.subject },
        { header: 'FROM', value: (s) => isoSeconds(s.firstAt) },
        { header: 'PEAK', value: (s) => String(s.peakCount), right: true },
        { header: 'OVER', value: (s) => String(s.requestsOver), right: true },
        { header: 'REFUSED', value: (s) => String(s.refused), right: true },
      ])
        .split('\n')
        .map((l) => `    ${l}`),
    );
  }
  if (o.topCountries.length > 0) lines.push(`  top countries: ${o.topCountries.map((c) => `${c.name} ${c.requests}`).join(', ')}`);
  if (o.topPrefixes.length > 0) lines.push(`  top prefixes: ${o.topPrefixes.map((c) => `${c.name} ${c.requests}`).join(', ')}`);
  return lines;
}

export function renderReport(r: Report): string {
  const lines = [
    `Backtest ${isoSeconds(r.range.from)} → ${isoSeconds(r.range.to)}: ${r.records.toLocaleString('en-US')} records, ${r.events.toLocaleString('en-US')} requests from ${r.clients.toLocaleString('en-US')} clients${r.invalidEvents > 0 ? ` (${r.invalidEvents} invalid skipped)` : ''}`,
    '',
    ...renderOutcome(r.candidate, 'Candidate'),
  ];
  if (r.active && r.comparison) {
    const c = r.comparison;
    lines.push('', ...renderOutcome(r.active, 'Active'), '');
    lines.push(
      `Compared with the active version: ${c.bannedByBoth} banned by both, ${c.bannedOnlyByCandidate.length} only by the candidate, ${c.bannedOnlyByActive.length} only by the active one; ${c.affectedRequestsDelta >= 0 ? '+' : ''}${c.affectedRequestsDelta} refused requests`,
    );
    if (c.bannedOnlyByCandidate.length > 0) lines.push(`  only the candidate bans: ${c.bannedOnlyByCandidate.join(', ')}`);
    if (c.bannedOnlyByActive.length > 0) lines.push(`  only the active one bans: ${c.bannedOnlyByActive.join(', ')}`);
  }
  return lines.join('\n');
}

export const backtestCommand: Command = {
  name: 'backtest',
  usage: 'banstream backtest (-f FILE [--id ID] | --policy ID) --from 6h|ISO [--to ISO] [--json]',
  summary: 'replay retained traffic through a policy: what it would have banned or throttled',
  options: { file: { type: 'string', short: 'f' }, id: { type: 'string' }, policy: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } },
  async run({ api, values, json, print, io }) {
    const from = text(values, 'from');
    if (!from) throw new CliError('backtest needs --from (a duration ago such as 6h, or an ISO time)', EXIT.usage);
    const file = text(values, 'file');
    const stored = text(values, 'policy');
    if ((file === undefined) === (stored === undefined)) throw new CliError('backtest needs -f FILE (a candidate) or --policy ID (a stored policy)', EXIT.usage);
    let body: Record<string, unknown>;
    if (file !== undefined) {
      const policies = readPolicies(file);
      const id = text(values, 'id');
      const chosen = id === undefined ? (policies.length === 1 ? policies[0] : undefined) : policies.find((p) => p.id === id);
      if (!chosen)
        throw new CliError(id === undefined ? `${file} holds ${policies.length} policies: choose one with --id (${policies.map((p) => p.id).join(', ')})` : `${file} has no policy ${id}`, EXIT.usage);
      body = { policy: chosen };
    } else {
      body = { policyId: stored };
    }
    const client = api();
    let job = await client.post<Job>('/v1/backtests', { ...body, from, ...(text(values, 'to') ? { to: text(values, 'to') } : {}) });
    const bar = new ProgressBar(io.stderr, 'records');
    while (job.state === 'running') {
      bar.update(job.progress.records, job.progress.total);
      await new Promise((r) => setTimeout(r, 250));
      job = await client.get<Job>(`/v1/backtests/${job.id}`);
    }
    bar.update(job.progress.records, job.progress.total);
    bar.done();
    if (job.state === 'failed' || !job.result) throw new CliError(`backtest ${job.id} failed: ${job.error ?? 'no result'}`, EXIT.failed);
    print(json ? JSON.stringify(job.result, null, 2) : renderReport(job.result));
  },
};
