import type { Command } from '../command.js';
import { text } from '../command.js';
import { CliError, EXIT } from '../exit-codes.js';
import { isoSeconds, relative, table } from '../format/table.js';

interface Outcome {
  at: number;
  ok: boolean;
  entries?: number;
  added?: number;
  renewed?: number;
  lifted?: number;
  skipped?: { allowlisted: number; bannedOtherwise: number; tooWide: number };
  invalid?: number;
  code?: string;
  error?: string;
  kept?: number;
}

interface FeedView {
  name: string;
  source: string;
  format: string;
  column: string | null;
  refreshMs: number;
  banMs: number;
  status: number;
  maxEntries: number;
  forced: string | null;
  bans: number;
  lastRefresh: Outcome | null;
}

const ms = (n: number) => (n % 86_400_000 === 0 ? `${n / 86_400_000}d` : n % 3_600_000 === 0 ? `${n / 3_600_000}h` : n % 60_000 === 0 ? `${n / 60_000}m` : `${n / 1000}s`);

/** `+120 ~3 -7, skipped 2 allowlisted`: what a refresh did, in one line. */
export function describeOutcome(o: Outcome): string {
  if (!o.ok) return `refused (${o.code}): ${o.error}`;
  const skipped = o.skipped ? Object.entries(o.skipped).filter(([, n]) => n > 0) : [];
  const names: Record<string, string> = { allowlisted: 'allowlisted', bannedOtherwise: 'banned otherwise', tooWide: 'too wide' };
  return [
    `${o.entries} entries: +${o.added} added, ${o.renewed} renewed, -${o.lifted} lifted`,
    ...(skipped.length > 0 ? [`skipped ${skipped.map(([k, n]) => `${n} ${names[k] ?? k}`).join(', ')}`] : []),
    ...(o.invalid ? [`${o.invalid} invalid lines`] : []),
  ].join('; ');
}

export const feedCommands: Command[] = [
  {
    name: 'feeds list',
    usage: 'banstream feeds list [--json]',
    summary: 'list the blocklist feeds, their bans and last refresh',
    async run({ api, json, print, io }) {
      const { feeds } = await api().get<{ feeds: FeedView[] }>('/v1/feeds');
      if (json) return print(JSON.stringify(feeds, null, 2));
      const now = io.now();
      print(
        table(feeds, [
          { header: 'NAME', value: (f) => f.name },
          { header: 'FORMAT', value: (f) => (f.format === 'csv' ? `csv:${f.column}` : f.format) },
          { header: 'EVERY', value: (f) => ms(f.refreshMs) },
          { header: 'BANS', value: (f) => `${f.bans}/${f.maxEntries}`, right: true },
          { header: 'LAST REFRESH', value: (f) => (f.lastRefresh === null ? 'never' : `${relative(f.lastRefresh.at, now)} ${f.lastRefresh.ok ? 'ok' : f.lastRefresh.code}`) },
          { header: 'SOURCE', value: (f) => f.source, max: 60 },
        ]),
      );
    },
  },
  {
    name: 'feeds add',
    usage:
      'banstream feeds add NAME SOURCE [--format netset|csv] [--column N|NAME] [--header] [--refresh 1h] [--duration 1d] [--status 403|429] [--reason TEXT] [--max-entries N] [--force] [--json]\n' +
      "  SOURCE is an http(s) URL reaching a public address (or one in the server's CONTROL_FEED_ALLOWED_NETWORKS), or a file under its CONTROL_FEED_FILE_DIR; --force (admin) bans entries wider than the guard rails too",
    summary: 'add (or replace) a blocklist feed: FireHOL netsets, Spamhaus DROP, a CSV column',
    args: 2,
    options: {
      format: { type: 'string' },
      column: { type: 'string' },
      header: { type: 'boolean' },
      refresh: { type: 'string' },
      duration: { type: 'string', short: 'd' },
      status: { type: 'string' },
      reason: { type: 'string', short: 'r' },
      'max-entries': { type: 'string' },
      force: { type: 'boolean' },
    },
    async run({ api, args, values, json, print }) {
      const maxEntries = text(values, 'max-entries');
      if (maxEntries !== undefined && !/^[1-9][0-9]*$/.test(maxEntries)) throw new CliError('--max-entries must be a positive whole number', EXIT.usage);
      const status = text(values, 'status');
      const body = {
        name: args[0],
        source: args[1],
        format: text(values, 'format'),
        column: text(values, 'column'),
        header: values.header === true ? true : undefined,
        refresh: text(values, 'refresh'),
        duration: text(values, 'duration'),
        status: status === undefined ? undefined : Number(status),
        reason: text(values, 'reason'),
        maxEntries: maxEntries === undefined ? undefined : Number(maxEntries),
        force: values.force === true ? true : undefined,
      };
      const feed = await api().post<FeedView>('/v1/feeds', Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
      print(
        json
          ? JSON.stringify(feed, null, 2)
          : `feed ${feed.name} (${feed.source}) refreshed every ${ms(feed.refreshMs)}, bans for ${ms(feed.banMs)}; its first refresh runs shortly, or now with: banstream feeds sync ${feed.name}`,
      );
    },
  },
  {
    name: 'feeds sync',
    usage:
      'banstream feeds sync NAME [--force] [--json]\n  refuses (exit 7) to lift more of its bans than the server allows at once (CONTROL_FEED_MAX_LIFT_PERCENT) unless --force; a source that cannot be read or is malformed exits 1, the bans kept',
    summary: 'refresh a blocklist feed now',
    args: 1,
    options: { force: { type: 'boolean' } },
    async run({ api, args, values, json, print }) {
      let outcome: Outcome;
      try {
        outcome = await api().post<Outcome>(`/v1/feeds/${encodeURIComponent(args[0]!)}/sync`, values.force === true ? { force: true } : {});
      } catch (error) {
        // The source failed (or led to a refused address), not the API: exit 1 rather than "API unreachable" or "invalid input".
        if (error instanceof CliError && (error.problem === 'FEED_SOURCE_FAILED' || error.problem === 'FEED_ADDRESS_REFUSED' || error.problem === 'FEED_INVALID'))
          throw new CliError(error.message, EXIT.failed, error.details, error.problem);
        if (error instanceof CliError && error.problem === 'FEED_LIFT_REFUSED') {
          throw new CliError(error.message, error.exitCode, [...error.details, 'hint: if the list really shrank, run it again with --force'], error.problem);
        }
        throw error;
      }
      print(json ? JSON.stringify(outcome, null, 2) : `synced ${args[0]} at ${isoSeconds(outcome.at)}: ${describeOutcome(outcome)}`);
    },
  },
  {
    name: 'feeds rm',
    usage: 'banstream feeds rm NAME [--json]',
    summary: 'remove a blocklist feed and lift its bans',
    args: 1,
    async run({ api, args, json, print }) {
      const result = await api().delete<{ removed: string; lifted: number }>(`/v1/feeds/${encodeURIComponent(args[0]!)}`);
      print(json ? JSON.stringify(result) : `removed the feed ${result.removed} and lifted its ${result.lifted} bans`);
    },
  },
];
