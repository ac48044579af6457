import { Value } from '@sinclair/typebox/value';
import { isBanstreamError } from '../errors.js';
import { normalisePath, parseDimension, parseKey, parseSubject, tryParseCidr, type KeyDimension } from '../subjects/index.js';
import { formatDuration, tryParseDuration } from './duration.js';
import { globProblem } from './glob.js';
import { headerPatternProblem } from './header-pattern.js';
import { Duration } from './schema.js';
import { checkTimeRules } from './validate-check-time.js';
import { isRecord, type PathSegment, type PolicyIssue } from './validate-messages.js';

/**
 * Rules that span fields, which a JSON Schema cannot say. They read the raw value
 * defensively (it may also have failed the schema), so one pass reports both kinds;
 * validate.ts keeps the first issue per path, schema issues first.
 */

const SECOND = 1_000;
const DAY = 86_400_000;
const INTERVAL = { min: SECOND, max: 30 * DAY };
const BAN = { min: SECOND, max: 365 * DAY };
const HEADER_TESTS = ['present', 'equals', 'contains', 'matches'] as const;
/** The schema's longest header pattern and path glob. */
const MAX_PATTERN_LENGTH = 512;

type Push = (at: readonly PathSegment[], message: string, related?: readonly PathSegment[]) => void;

export function crossFieldIssues(doc: unknown): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  const push: Push = (at, message, related) => issues.push(related === undefined ? { at, message } : { at, message, related });
  if (!isRecord(doc)) return issues;
  const policies = Array.isArray(doc.policies) ? doc.policies : [];
  duplicates(policies, 'policies', 'id', push);
  policies.forEach((p, i) => {
    if (isRecord(p)) policyRules(p, ['policies', i], push);
  });
  const allowlist = Array.isArray(doc.allowlist) ? doc.allowlist : [];
  duplicates(allowlist, 'allowlist', 'entry', push);
  allowlist.forEach((entry, i) => {
    if (!isRecord(entry)) return;
    if (typeof entry.entry === 'string' && entry.entry !== '') {
      const problem = allowEntryProblem(entry.entry);
      if (problem !== undefined) push(['allowlist', i, 'entry'], problem);
    }
    if (typeof entry.expiresAt === 'string' && !isIsoDateTime(entry.expiresAt)) {
      push(['allowlist', i, 'expiresAt'], 'must be an ISO 8601 date-time with a zone, such as 2026-12-31T23:59:59Z');
    }
  });
  return issues;
}

/** Policy ids and allowlist entries key compacted topics: a repeat would silently replace the first. */
function duplicates(items: unknown[], list: string, field: string, push: Push): void {
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    const value = isRecord(item) ? item[field] : undefined;
    if (typeof value !== 'string') return;
    const seen = first.get(value);
    if (seen === undefined) first.set(value, i);
    else push([list, i, field], `duplicate of {related} ${JSON.stringify(value)}`, [list, seen, field]);
  });
}

function policyRules(p: Record<string, unknown>, at: readonly PathSegment[], push: Push): void {
  const threshold = record(p.threshold);
  const action = record(p.action);
  const enforcement = record(p.enforcement);
  // No enforcement block means async; an unknown type is the schema's to report, so skip these rules.
  const enforcementType = p.enforcement === undefined ? 'async' : enforcement.type;
  const hard = enforcementType === 'hard';
  const known = hard || enforcementType === 'async';

  if (Array.isArray(p.key)) keyRules(p.key, [...at, 'key'], push, hard || action.type === 'ban' || action.type === 'throttle');

  // Enforcement: only hard policies talk to Redis, so only they choose an algorithm, and must say how
  // to fail without it. An async policy's failure mode (closed by default) decides while caches load.
  if (hard && enforcement.failureMode === undefined) {
    push([...at, 'enforcement', 'failureMode'], 'is required when enforcement.type is hard (one of open, closed, local)');
  }
  if (enforcementType === 'async' && enforcement.algorithm !== undefined) push([...at, 'enforcement', 'algorithm'], 'is only allowed when enforcement.type is hard');
  const tokenBucket = hard && enforcement.algorithm === 'token-bucket';
  if (tokenBucket && threshold.burst === undefined) {
    push([...at, 'threshold', 'burst'], 'is required when enforcement.algorithm is token-bucket');
  }
  if (known && !tokenBucket && threshold.burst !== undefined) {
    push([...at, 'threshold', 'burst'], 'is only allowed with enforcement.type hard and enforcement.algorithm token-bucket');
  }
  if (hard && action.type === 'ban') {
    push(
      [...at, 'action', 'type'],
      'ban is not supported with enforcement.type hard: bans are decided by the aggregator from shared counts; use enforcement.type async, or action.type throttle for a hard limit',
    );
  }

  const intervalMs = durationInRange(threshold.interval, [...at, 'threshold', 'interval'], INTERVAL, push);
  const banDurationMs = durationInRange(action.banDuration, [...at, 'action', 'banDuration'], BAN, push);
  const banThreshold = record(action.banThreshold);
  const banIntervalMs = durationInRange(banThreshold.interval, [...at, 'action', 'banThreshold', 'interval'], INTERVAL, push);
  if (intervalMs !== undefined && intervalMs === banIntervalMs && typeof banThreshold.count === 'number' && typeof threshold.count === 'number' && banThreshold.count < threshold.count) {
    push([...at, 'action', 'banThreshold', 'count'], `must be >= threshold.count (${threshold.count}) when the intervals are equal: a ban cannot trigger below the rate limit`);
  }

  if (p.escalation !== undefined) {
    const escalation = record(p.escalation);
    if (action.type !== undefined && action.type !== 'ban') push([...at, 'escalation'], 'is only allowed when action.type is ban');
    const maxMs = durationInRange(escalation.maxDuration, [...at, 'escalation', 'maxDuration'], BAN, push);
    durationInRange(escalation.decayAfter, [...at, 'escalation', 'decayAfter'], BAN, push);
    if (maxMs !== undefined && banDurationMs !== undefined && maxMs < banDurationMs) {
      push([...at, 'escalation', 'maxDuration'], `must be >= action.banDuration (${formatDuration(banDurationMs)})`);
    }
  }

  if (p.schedule !== undefined) scheduleRules(record(p.schedule), [...at, 'schedule'], push);
  const headers = record(p.match).headers;
  if (Array.isArray(headers)) headers.forEach((h, j) => headerRules(record(h), [...at, 'match', 'headers', j], push));
  const paths = record(p.match).paths;
  if (Array.isArray(paths)) paths.forEach((glob, j) => globRules(glob, [...at, 'match', 'paths', j], push));
  const prefixes = record(p.match).pathPrefixes;
  if (Array.isArray(prefixes)) prefixes.forEach((prefix, j) => normalPathRule(prefix, [...at, 'match', 'pathPrefixes', j], push));
  if (Array.isArray(p.costs)) p.costs.forEach((rule, j) => costRules(record(rule), [...at, 'costs', j], push));
  checkTimeRules(p, at, push);
}

const COST_CONDITIONS = ['methods', 'paths', 'pathPrefixes', 'routes'] as const;

/** A cost rule's paths are matched as `match`'s are (same globs, same normal form); one without a condition is a threshold in disguise. */
function costRules(rule: Record<string, unknown>, at: readonly PathSegment[], push: Push): void {
  if (COST_CONDITIONS.every((c) => rule[c] === undefined)) {
    push(at, `needs at least one of ${COST_CONDITIONS.join(', ')}: a cost for every request only rescales threshold.count`);
  }
  if (Array.isArray(rule.paths)) rule.paths.forEach((glob, j) => globRules(glob, [...at, 'paths', j], push));
  if (Array.isArray(rule.pathPrefixes)) rule.pathPrefixes.forEach((prefix, j) => normalPathRule(prefix, [...at, 'pathPrefixes', j], push));
}

/** Globs are compiled by the same code that matches them, so what passes here runs. */
function globRules(glob: unknown, at: readonly PathSegment[], push: Push): void {
  if (typeof glob !== 'string' || glob.length > MAX_PATTERN_LENGTH) return;
  const problem = globProblem(glob);
  if (problem !== undefined) push(at, problem);
  else normalPathRule(glob, at, push);
}

/**
 * Requests are matched by their normalised path (normalisePath): a path, prefix or
 * glob that normalising would change, such as `/log%69n` or `/a/../login`, would match
 * no request as written, or other ones than it says. Refused rather than rewritten, so
 * the policy shown is the policy applied.
 */
function normalPathRule(path: unknown, at: readonly PathSegment[], push: Push): void {
  if (typeof path !== 'string' || !path.startsWith('/')) return;
  const normal = normalisePath(path);
  if (normal !== path) {
    push(
      at,
      `is not in normal form: requests are matched by their normalised path (escapes decoded but those of / ? # % ; : @ & = + $ , which ` +
        `are upper-cased, dot segments removed, runs of / merged, no query), in which this is ${JSON.stringify(normal)}`,
    );
  }
}

function scheduleRules(s: Record<string, unknown>, at: readonly PathSegment[], push: Push): void {
  if (typeof s.timeZone === 'string' && s.timeZone !== '' && !isTimeZone(s.timeZone)) {
    push([...at, 'timeZone'], `unknown time zone ${JSON.stringify(s.timeZone)}: must be an IANA name such as Europe/Paris`);
  }
  // The schema's `to` pattern admits 24:01-24:59; only 24:00 (end of day) means anything.
  if (typeof s.to === 'string' && /^24:(0[1-9]|[1-5][0-9])$/.test(s.to)) {
    push([...at, 'to'], 'must be a local time HH:MM from 00:00 to 24:00');
  } else if (typeof s.from === 'string' && s.from === s.to) {
    push([...at, 'to'], 'must differ from schedule.from (the window would be empty)');
  }
}

function headerRules(h: Record<string, unknown>, at: readonly PathSegment[], push: Push): void {
  const given = HEADER_TESTS.filter((t) => h[t] !== undefined);
  if (given.length !== 1) {
    const found = given.length === 0 ? 'none given' : `found ${given.join(', ')}`;
    push(at, `needs exactly one of present, equals, contains, matches (${found})`);
  }
  // Longer is the schema's to report: not compiled at all.
  if (typeof h.matches === 'string' && h.matches.length <= MAX_PATTERN_LENGTH) {
    // Compiled by the same code that matches headers (header-pattern.ts), so what passes here runs.
    const problem = headerPatternProblem(h.matches);
    if (problem !== undefined) push([...at, 'matches'], problem);
  }
}

/** Key dimensions are the subjects module's language: the same parser compileKey uses. */
function keyRules(key: unknown[], at: readonly PathSegment[], push: Push, denies: boolean): void {
  let allParse = key.length > 0;
  key.forEach((dimension, j) => {
    if (typeof dimension !== 'string' || dimension === '') return void (allParse = false);
    const problem = subjectsError(() => parseDimension(dimension));
    if (problem !== undefined) {
      allParse = false;
      push([...at, j], problem);
    } else if (denies) {
      const wide = widePrefixProblem(parseDimension(dimension));
      if (wide !== undefined) push([...at, j], wide);
    }
  });
  // Each dimension is fine alone; together they may clash (`prefix` and `prefix/20` are both cidr).
  const clash = allParse ? subjectsError(() => parseKey(key as string[])) : undefined;
  if (clash !== undefined) push(at, clash);
}

/**
 * The widest networks a denying policy may count as one subject: the control API's
 * default floor for manual bans (CONTROL_MIN_PREFIX_V4/V6). A `prefix/0` key would
 * ban or throttle the whole internet once its total traffic crossed the threshold.
 */
export const MIN_POLICY_PREFIX_BITS = { v4: 8, v6: 32 } as const;

function widePrefixProblem(d: KeyDimension): string | undefined {
  if (d.kind !== 'prefix') return undefined;
  const { v4 = MIN_POLICY_PREFIX_BITS.v4, v6 = MIN_POLICY_PREFIX_BITS.v6 } = d;
  if (v4 >= MIN_POLICY_PREFIX_BITS.v4 && v6 >= MIN_POLICY_PREFIX_BITS.v6) return undefined;
  return (
    `IPv4 /${v4} or IPv6 /${v6} counts too wide a network as one subject for a policy that bans or throttles ` +
    `(at least /${MIN_POLICY_PREFIX_BITS.v4} for IPv4 and /${MIN_POLICY_PREFIX_BITS.v6} for IPv6; action.type alert may count wider)`
  );
}

/** An allowlist entry is matched as a network (a bare IP is its /32 or /128) or as a subject. */
function allowEntryProblem(entry: string): string | undefined {
  if (tryParseCidr(entry) !== undefined) return undefined;
  const reason = subjectsError(() => parseSubject(entry), true);
  return reason === undefined ? undefined : `must be an IP, a CIDR or a subject such as user:42 (${reason})`;
}

/** The subjects module's own words: its whole message, or only the reason inside it. */
function subjectsError(parse: () => unknown, reasonOnly = false): string | undefined {
  try {
    parse();
    return undefined;
  } catch (err) {
    if (!isBanstreamError(err)) throw err;
    const reason = err.details.reason;
    return reasonOnly && typeof reason === 'string' ? reason : err.message;
  }
}

/** ms of a duration within `range`, or undefined (after reporting the range) if out of it. */
function durationInRange(value: unknown, at: readonly PathSegment[], range: { min: number; max: number }, push: Push): number | undefined {
  if (value === undefined) return undefined;
  const ms = tryParseDuration(value);
  // Shape errors are the schema's; a well-formed duration too large to count is ours.
  if (ms === undefined && !Value.Check(Duration, value)) return undefined;
  if (ms === undefined || ms < range.min || ms > range.max) {
    push(at, `must be between ${formatDuration(range.min)} and ${formatDuration(range.max)}`);
    return undefined;
  }
  return ms;
}

export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat(undefined, { timeZone });
    return true;
  } catch (err) {
    if (err instanceof RangeError) return false;
    throw err;
  }
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** RFC 3339 date-time with an explicit zone (seconds optional); rejects 2026-02-30 and 25:00. */
export function isIsoDateTime(text: string): boolean {
  const m = ISO_DATE_TIME.exec(text);
  if (m === null) return false;
  const [year, month, day, hour, minute, second, offH, offM] = m.slice(1).map((g) => (g === undefined ? 0 : Number(g))) as number[];
  const date = new Date(Date.UTC(year!, month! - 1, day!));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month! - 1 && date.getUTCDate() === day && hour! <= 23 && minute! <= 59 && second! <= 59 && offH! <= 23 && offM! <= 59;
}

function record(v: unknown): Record<string, unknown> {
  return isRecord(v) ? v : {};
}
