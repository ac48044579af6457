/**
 * The demo's status screen: pure, state in, text out. The caller redraws it in
 * place (frame(): cursor home, each line cleared to its end, the rest of the
 * screen cleared), so it never scrolls.
 */
import { CLASSES, type TrafficClass } from './scenario.js';

export interface BanRow {
  subject: string;
  policyId: string;
  since: number;
  expiresAt: number;
  /** For an attacker's ban: from its attack's first request to refused at every edge. */
  afterAttackMs?: number | undefined;
  /** From the request that crossed the threshold (the ban's start) to refused at every edge: the pipeline's part. */
  afterCrossingMs?: number | undefined;
}

export interface AlertRow {
  code: string;
  state: string;
  at: number;
  currentRate: number;
  baselineRate: number;
  ratio: number;
}

export interface DisplayState {
  now: number;
  startedAt: number;
  /** One line: where the demo is connected. */
  target: string;
  /** Attacks running now. */
  attacks: string[];
  /** Requests per second over the last seconds. */
  rates: Record<TrafficClass, { allowed: number; denied: number }>;
  bans: BanRow[];
  alerts: AlertRow[];
  /** Shown at the bottom: what the demo is doing, or a problem. */
  status: string;
}

const LABELS: Record<TrafficClass, string> = { legit: 'legitimate users', flood: 'single-IP flood', botnet: 'botnet /24 (logins)', spike: 'night spike' };
const MAX_BANS = 8;
const MAX_ALERTS = 4;

export function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

const rate = (n: number) => n.toFixed(1).padStart(7);

export function render(state: DisplayState, width = 120): string {
  const lines: string[] = [];
  lines.push(`banstream demo  ${seconds(state.now - state.startedAt)}  ${state.target}`);
  lines.push(`attacks now: ${state.attacks.length ? state.attacks.join(', ') : 'none'}`);
  lines.push('');
  lines.push(`${'TRAFFIC (req/s)'.padEnd(22)}${'allowed'.padStart(7)}  ${'denied'.padStart(7)}`);
  for (const c of CLASSES) lines.push(`${LABELS[c].padEnd(22)}${rate(state.rates[c].allowed)}  ${rate(state.rates[c].denied)}`);
  lines.push('');
  lines.push(`ACTIVE BANS (${state.bans.length})`);
  const bans = [...state.bans].sort((a, b) => b.since - a.since).slice(0, MAX_BANS);
  if (bans.length === 0) lines.push('  none');
  for (const b of bans) {
    const crossing = b.afterCrossingMs === undefined ? '' : ` (crossing +${b.afterCrossingMs} ms)`;
    const after = b.afterAttackMs === undefined ? '' : `banned ${b.afterAttackMs} ms after attack start${crossing}`;
    lines.push(`  ${b.subject.padEnd(22)}${b.policyId.padEnd(21)}age ${seconds(state.now - b.since).padEnd(6)}lifts ${seconds(b.expiresAt - state.now).padEnd(7)}${after}`);
  }
  if (state.bans.length > MAX_BANS) lines.push(`  … and ${state.bans.length - MAX_BANS} more`);
  lines.push('');
  lines.push('RECENT ALERTS');
  const alerts = [...state.alerts].sort((a, b) => b.at - a.at).slice(0, MAX_ALERTS);
  if (alerts.length === 0) lines.push('  none');
  for (const a of alerts) {
    lines.push(`  ${a.state.padEnd(9)}${a.code.padEnd(4)}${a.currentRate.toFixed(2)} req/s vs ${a.baselineRate.toFixed(2)} usual (${a.ratio.toFixed(1)}x)  ${seconds(state.now - a.at)} ago`);
  }
  lines.push('');
  lines.push(state.status);
  return lines
    .map((l) => l.trimEnd())
    .map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l))
    .join('\n');
}

/** The escape sequence that redraws `text` over the previous frame. */
export function frame(text: string): string {
  return `\x1b[H${text.split('\n').join('\x1b[K\n')}\x1b[K\x1b[J`;
}

/** Requests per second of each class from two snapshots of the driver's counters. */
export function ratesBetween(before: Record<TrafficClass, { allowed: number; denied: number }>, after: Record<TrafficClass, { allowed: number; denied: number }>, ms: number): DisplayState['rates'] {
  const per = (a: number, b: number) => (ms > 0 ? ((b - a) * 1000) / ms : 0);
  return Object.fromEntries(CLASSES.map((c) => [c, { allowed: per(before[c].allowed, after[c].allowed), denied: per(before[c].denied, after[c].denied) }])) as DisplayState['rates'];
}
