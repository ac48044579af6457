import type { Command } from '../command.js';
import { text } from '../command.js';
import { CliError, EXIT } from '../exit-codes.js';
import { isoSeconds, relative, table } from '../format/table.js';
import { BAN_FORCE_HELP, FORCE_OPTION, hintForce } from './force.js';
import { timeArg } from './time-arg.js';

interface HistoryView {
  action: string;
  at: number;
  actor: string | null;
  ban: BanView;
}

export interface BanView {
  subject: string;
  policyId: string;
  reason: string;
  evidenceCount: number;
  startedAt: number;
  expiresAt: number;
  preview: boolean;
  origin: string;
  httpStatus: number;
  createdBy: string | null;
  windowSeconds?: number;
  escalationLevel?: number;
  evidence?: BanEvidenceView | null;
}

interface ValueCount {
  value: string;
  count: number;
}

interface BanEvidenceView {
  firstEventAt: number;
  lastEventAt: number;
  sampledEvents: number;
  paths: ValueCount[];
  methods: ValueCount[];
  statuses: ValueCount[];
  userAgents: ValueCount[];
  edges: ValueCount[];
}

/** A ban as `bans show` prints it: one field a line, the evidence's top values after. */
export function banDetails(ban: BanView, now: number): string {
  const rows: [string, string][] = [
    ['subject', ban.subject],
    ['policy', ban.policyId],
    ['origin', ban.origin === 'manual' && ban.createdBy ? `manual (${ban.createdBy})` : ban.origin],
    ['status', ban.preview ? `${ban.httpStatus} preview (not enforced)` : String(ban.httpStatus)],
    ['since', isoSeconds(ban.startedAt)],
    ['expires', `${isoSeconds(ban.expiresAt)} (${ban.expiresAt <= now ? 'expired' : relative(ban.expiresAt, now)})`],
    ['reason', ban.reason],
  ];
  if (ban.escalationLevel) rows.push(['escalation', `level ${ban.escalationLevel}`]);
  if (ban.windowSeconds) rows.push(['window', `${formatCount(ban.evidenceCount)} requests in ${ban.windowSeconds} s at the crossing`]);
  const e = ban.evidence;
  if (e) {
    rows.push(['events', `first ${isoSeconds(e.firstEventAt)}, last ${isoSeconds(e.lastEventAt)} (in the window)`]);
    rows.push(['sampled', e.sampledEvents > 0 ? `${e.sampledEvents} events since the subject turned hot` : 'no sample (counted from sums, or not hot before the ban)']);
    for (const [label, values] of [
      ['paths', e.paths],
      ['methods', e.methods],
      ['statuses', e.statuses],
      ['user agents', e.userAgents],
      ['edges', e.edges],
    ] as const) {
      if (values.length > 0) rows.push([label, values.map((v) => `${JSON.stringify(v.value)} ×${formatCount(v.count)}`).join(', ')]);
    }
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v.replace(/\s+/g, ' ')}`).join('\n');
}

function formatCount(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

export const banCommands: Command[] = [
  {
    name: 'bans list',
    usage: 'banstream bans list [--scope ip|cidr|user|…] [--subject TEXT] [--policy ID] [--origin aggregator|manual] [--all] [--limit N] [--json]',
    summary: 'search the live bans',
    options: {
      scope: { type: 'string' },
      subject: { type: 'string' },
      policy: { type: 'string' },
      origin: { type: 'string' },
      all: { type: 'boolean' },
      limit: { type: 'string' },
    },
    async run({ api, values, json, print, io }) {
      const page = await api().get<{ bans: BanView[]; total: number; next: string | null }>('/v1/bans', {
        scope: text(values, 'scope'),
        subject: text(values, 'subject'),
        policy: text(values, 'policy'),
        origin: text(values, 'origin'),
        includeExpired: values.all === true ? true : undefined,
        limit: text(values, 'limit') ?? 100,
      });
      if (json) return print(JSON.stringify(page, null, 2));
      const now = io.now();
      print(
        table(page.bans, [
          { header: 'SUBJECT', value: (b) => b.subject },
          { header: 'POLICY', value: (b) => b.policyId },
          { header: 'ORIGIN', value: (b) => (b.origin === 'manual' && b.createdBy ? `manual (${b.createdBy})` : b.origin) },
          { header: 'STATUS', value: (b) => (b.preview ? `${b.httpStatus} preview` : String(b.httpStatus)) },
          { header: 'SINCE', value: (b) => isoSeconds(b.startedAt) },
          { header: 'EXPIRES', value: (b) => (b.expiresAt <= now ? 'expired' : relative(b.expiresAt, now)) },
          { header: 'REASON', value: (b) => b.reason, max: 60 },
        ]),
      );
      print(`${page.bans.length} of ${page.total} ban(s)${page.next ? ` (more after ${page.next}: --limit)` : ''}`);
    },
  },
  {
    name: 'bans show',
    usage: 'banstream bans show SUBJECT [--json]',
    summary: 'the ban held for a subject, with its evidence (what the subject sent)',
    args: 1,
    async run({ api, args, json, print, io }) {
      const ban = await api().get<BanView>(`/v1/bans/${encodeURIComponent(args[0]!)}`);
      print(json ? JSON.stringify(ban, null, 2) : banDetails(ban, io.now()));
    },
  },
  {
    name: 'bans history',
    usage: 'banstream bans history SUBJECT [--since 30d|ISO] [--until ISO] [--limit N] [--after CURSOR] [--json]',
    summary: "a subject's bans, lifts and expiries, oldest first (the ban-history topic)",
    args: 1,
    options: { since: { type: 'string' }, until: { type: 'string' }, limit: { type: 'string' }, after: { type: 'string' } },
    async run({ api, args, values, json, print, io }) {
      const now = io.now();
      const page = await api().get<{ subject: string; entries: HistoryView[]; next: string | null; scanned: number }>(`/v1/bans/${encodeURIComponent(args[0]!)}/history`, {
        since: timeArg(text(values, 'since'), 'since', now),
        until: timeArg(text(values, 'until'), 'until', now),
        limit: text(values, 'limit') ?? 100,
        after: text(values, 'after'),
      });
      if (json) return print(JSON.stringify(page, null, 2));
      print(
        table(page.entries, [
          { header: 'AT', value: (e) => isoSeconds(e.at) },
          { header: 'ACTION', value: (e) => e.action },
          { header: 'BY', value: (e) => e.actor ?? (e.action === 'ban' ? e.ban.origin : '') },
          { header: 'POLICY', value: (e) => e.ban.policyId },
          { header: 'UNTIL', value: (e) => isoSeconds(e.ban.expiresAt) },
          { header: 'REASON', value: (e) => e.ban.reason, max: 60 },
        ]),
      );
      print(`${page.entries.length} entr${page.entries.length === 1 ? 'y' : 'ies'} for ${page.subject}${page.next ? `; more: --after ${page.next}` : ''}`);
    },
  },
  {
    name: 'bans add',
    usage: `banstream bans add SUBJECT --duration 1h --reason TEXT [--status 403|429] [--force] [--json]\n  ${BAN_FORCE_HELP}`,
    summary: 'ban an address, a network or a subject (user:42) by hand',
    args: 1,
    options: { duration: { type: 'string', short: 'd' }, reason: { type: 'string', short: 'r' }, status: { type: 'string' }, ...FORCE_OPTION },
    async run({ api, args, values, json, print, io }) {
      const duration = text(values, 'duration');
      const reason = text(values, 'reason');
      if (!duration || !reason) throw new CliError('bans add needs --duration (e.g. 1h) and --reason', EXIT.usage);
      const status = text(values, 'status');
      const force = values.force === true ? { force: true } : {};
      const ban = await hintForce(api().post<BanView>('/v1/bans', { subject: args[0], duration, reason, ...(status ? { status: Number(status) } : {}), ...force }));
      print(json ? JSON.stringify(ban, null, 2) : `banned ${ban.subject} until ${isoSeconds(ban.expiresAt)} (${relative(ban.expiresAt, io.now())}): ${ban.reason}`);
    },
  },
  {
    name: 'bans rm',
    usage: 'banstream bans rm SUBJECT [--json]',
    summary: 'lift a ban (a tombstone on the bans topic)',
    args: 1,
    async run({ api, args, json, print }) {
      const result = await api().delete<{ lifted: string }>(`/v1/bans/${encodeURIComponent(args[0]!)}`);
      print(json ? JSON.stringify(result) : `lifted the ban on ${result.lifted}`);
    },
  },
];
