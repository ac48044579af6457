/**
 * Checks with a blocklist feed's 100,000 entries loaded beside the million bans of
 * local.ts, and the heap each feed ban takes. The feed is a netset as real ones mix
 * them: 80% addresses, 20% networks over twenty prefix lengths (/12 to /31), all in
 * 64.0.0.0/2, so the requests (local.ts's stream: 10.x addresses, 45% banned) are
 * decided as without it and the difference is what the feed costs every check: the
 * enforcer probes one map per prefix length held (BanCache.networksOf). Rounds take
 * turns, without the feed then with it (added, and removed again after), each loop
 * timed after an untimed warm-up; the ratio is the median of each round's ratio.
 * Heap per feed ban: 100,000 bans decoded from their Avro records into an empty
 * BanCache, JS heap and array buffers after a full collection, before and after.
 */
import { Allowlist, attributesFromRequest, banId, PolicyBook } from '@banstream/core';
import { loadSchemaCatalog, SCHEMA_NAMES, type Ban, type PolicyRecord } from '@banstream/schemas';
import { BanCache } from '../../services/enforcer/dist/cache/ban-cache.js';
import { CountCache } from '../../services/enforcer/dist/cache/count-cache.js';
import { decideLocally } from '../../services/enforcer/dist/decide.js';
import { collect, heapBytes, median, note, prng } from '../lib.js';
import { benchBan, ipOf } from './local-fixture.js';

const BANS = 1_000_000;
const FEED = 100_000;
const CHECKS = 2_000_000;
const WARM_UP = 200_000;
const RUNS = 5;
const ORIGIN = 'feed:bench-netset';

const dotted = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** The feed's subjects, `count` of them, unique: every fifth a network of /12 to /31 (host bits cleared), the rest addresses. */
export function feedSubjects(count = FEED): string[] {
  const out = new Set<string>();
  // Networks cleared to a short prefix can repeat: draw until there are `count`.
  for (let i = 0; out.size < count; i++) {
    const n = (0x40000000 + i * 4099) >>> 0; // 64.0.0.0 upwards, a prime apart
    if (i % 5 !== 4) {
      out.add(`ip:${dotted(n)}`);
      continue;
    }
    const bits = 12 + (((i / 5) | 0) % 20);
    const mask = (0xffffffff << (32 - bits)) >>> 0;
    out.add(`cidr:${dotted((n & mask) >>> 0)}/${bits}`);
  }
  return [...out];
}

function feedBan(subject: string, now: number, i: number): Ban {
  return {
    banId: banId(ORIGIN, subject, now),
    subject,
    policyId: ORIGIN,
    reason: 'listed by the blocklist feed bench-netset',
    evidenceCount: 0,
    windowSeconds: 0,
    startedAt: now,
    expiresAt: now + 86_400_000 + i,
    preview: false,
    escalationLevel: 0,
    origin: ORIGIN,
    httpStatus: 403,
    createdBy: null,
  };
}

/**
 * Heap and array buffers per feed ban: the feed decoded into an empty BanCache, before
 * and after. A first cache is filled and dropped untimed, so that what its first use
 * allocates once (compiled code, the decoder's caches) and garbage it frees are not
 * counted for or against the bans (that skewed the figure by about 20 bytes a ban).
 */
export function feedBanBytes(subjects: readonly string[], decoded: (i: number) => Ban): number {
  note(`with feed: ${subjects.length} feed bans alone, heap per ban`);
  const fill = () => {
    const cache = new BanCache();
    for (let i = 0; i < subjects.length; i++) cache.observe(subjects[i]!, decoded(i));
    if (cache.size !== subjects.length) throw new Error(`with feed: the cache holds ${cache.size} feed bans, not ${subjects.length}`);
    return cache;
  };
  fill();
  const before = heapBytes();
  const alone = fill();
  const bytes = Math.round((heapBytes() - before) / subjects.length);
  if (alone.size < 0) throw new Error('unreachable');
  return bytes;
}

function policy(id: string, spec: Record<string, unknown>): PolicyRecord {
  return { id, version: 1, description: '', owner: 'bench', mode: 'enforce', enabled: true, definition: JSON.stringify(spec), updatedBy: 'bench', updatedAt: 0 };
}

export interface WithFeedFigures {
  /** Checks/s with the million bans and the feed's entries. */
  local_checks_per_s_with_feed: number;
  /** The same checks in the same rounds without the feed. */
  local_checks_per_s_without_feed: number;
  /** Median of the rounds' with/without ratios (target at least 0.9). */
  feed_check_ratio: number;
  feed_entries: number;
  feed_networks: number;
  feed_prefix_lengths: number;
  /** Heap per feed ban held (decoded as the bans feed decodes them). */
  ban_bytes_per_entry: number;
}

export function measureWithFeed(): WithFeedFigures {
  const now = Date.now();
  const codec = loadSchemaCatalog().codec(SCHEMA_NAMES.ban);
  const subjects = feedSubjects();
  const decoded = (i: number) => codec.decode(codec.encode(feedBan(subjects[i]!, now, i)));

  const bytesPerEntry = feedBanBytes(subjects, decoded);
  const feedBans = subjects.map((_, i) => decoded(i));

  note(`with feed: ${BANS} bans, then ${subjects.length} feed bans beside them`);
  const bans = new BanCache();
  for (let i = 0; i < BANS; i++) {
    const ban = benchBan(i, now);
    bans.observe(ban.subject, ban);
  }
  const policies = new PolicyBook();
  policies.apply('login-flood', policy('login-flood', { key: ['ip'], match: { paths: ['/login'] }, threshold: { count: 20, interval: '1m' }, action: { type: 'ban', banDuration: '1h' } }));
  policies.apply('api', policy('api', { key: ['ip'], match: { pathPrefixes: ['/api/'] }, threshold: { count: 100, interval: '1m' }, action: { type: 'throttle' } }));
  const state = { bans, counts: new CountCache(), allowlist: new Allowlist(), policies };
  const random = prng(7);
  const ips: string[] = [];
  for (let i = 0; i < 65_536; i++) ips.push(Buffer.from(ipOf(Math.floor(random() * BANS * 2 * 1.1)), 'latin1').toString('latin1'));
  const paths = ['/', '/api/items', '/login', '/products/1'];
  const headers = { 'user-agent': 'bench' };
  const uniform = () => 0.5;
  let sink = 0;
  const loop = (n: number) => {
    for (let i = 0; i < n; i++) {
      const attrs = attributesFromRequest({ ip: ips[i & 65_535]!, method: 'GET', host: 'shop.example', path: paths[i & 3]!, headers, timestamp: now });
      sink += decideLocally(state, attrs, now, uniform).candidates.length;
    }
  };
  const timed = () => {
    loop(WARM_UP);
    const t = performance.now();
    loop(CHECKS);
    return (CHECKS / (performance.now() - t)) * 1000;
  };
  const load = (on: boolean) => {
    for (let i = 0; i < subjects.length; i++) bans.observe(subjects[i]!, on ? feedBans[i]! : null);
  };
  const without: number[] = [];
  const withFeed: number[] = [];
  const ratios: number[] = [];
  collect();
  let denied = 0;
  for (let run = 0; run < RUNS; run++) {
    without.push(timed());
    load(true);
    collect();
    withFeed.push(timed());
    if (run === 0) denied = sink;
    load(false);
    collect();
    ratios.push(withFeed.at(-1)! / without.at(-1)!);
    note(`with feed run ${run + 1}: ${Math.round(withFeed.at(-1)!)} checks/s with the feed, ${Math.round(without.at(-1)!)} without (${ratios.at(-1)!.toFixed(3)})`);
  }
  if (denied < 0) throw new Error('unreachable');
  const networks = subjects.filter((s) => s.startsWith('cidr:'));
  return {
    local_checks_per_s_with_feed: Math.round(median(withFeed)),
    local_checks_per_s_without_feed: Math.round(median(without)),
    feed_check_ratio: Number(median(ratios).toFixed(3)),
    feed_entries: subjects.length,
    feed_networks: networks.length,
    feed_prefix_lengths: new Set(networks.map((s) => s.slice(s.indexOf('/') + 1))).size,
    ban_bytes_per_entry: bytesPerEntry,
  };
}
