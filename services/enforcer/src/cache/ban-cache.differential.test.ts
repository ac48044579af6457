import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressSubject, banId, canonicalIpv4, cidrContains, parseCidr, parseIp, tryParseIp, type Candidate } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import { BanCache } from './ban-cache.js';
import type { BanPageQuery } from './ban-page.js';

/**
 * The compact BanCache (rows, profiles, ids made again, an int32 index, network maps)
 * against ReferenceBans below, a Map of subject → Ban with the same contract, over
 * random sequences of bans, lifts, time passing, purges, checks and listings:
 * keys of every kind the cache files apart, spelt every way (IPv4-mapped, upper case,
 * host bits set), hostile ones (not a network, control characters, empty), bans whose
 * subject is not their key, ids made by banId() from their start or a renewal or not
 * at all, any number in the numeric fields, with and without evidence, a small cap.
 */

/**
 * What a BanCache means, written plainly for the differential test (ban-cache.differential.test.ts):
 * one Map from the subject a ban is filed under to the ban as given (its evidence
 * null), no table, no rows, no profiles. Every rule is the cache's contract:
 * - an address ban is filed under its canonical `ip:` text, a network (`cidr:…`
 *   without `|`) under its canonical masked text, anything else under its key as is;
 * - a ban on a subject not held is refused when `maxBans` are held, unless manual;
 *   a feed's (`feed:…`) already when 90% are held;
 * - a ban applies while now < expiresAt; purgeExpired drops the others;
 * - a listing is the live bans of a scope in subject order, after a subject, paged.
 */
class ReferenceBans {
  private readonly held = new Map<string, { ban: Ban; network: boolean }>();
  refused = 0;

  constructor(readonly maxBans: number) {}

  get size(): number {
    return this.held.size;
  }

  observe(key: string, ban: Ban | null): void {
    const { filed, network } = fileOf(key);
    if (!ban) {
      this.held.delete(filed);
      return;
    }
    if (!this.held.has(filed) && ban.origin !== 'manual') {
      const room = ban.origin.startsWith('feed:') ? this.maxBans - Math.ceil(this.maxBans * 0.1) : this.maxBans;
      if (this.held.size >= room) {
        this.refused++;
        return;
      }
    }
    this.held.set(filed, { ban: 'evidence' in ban ? { ...ban, evidence: null } : ban, network });
  }

  /** The live ban filed under exactly this subject, networks aside (they are found by address). */
  subject(subject: string, nowMs: number): Ban | undefined {
    const entry = this.held.get(subject);
    return entry && !entry.network && entry.ban.expiresAt > nowMs ? entry.ban : undefined;
  }

  address(ip: string, nowMs: number): Ban | undefined {
    return this.subject(addressSubject(parseIp(ip)), nowMs);
  }

  /** The live network bans containing the address, as filed subject → ban. */
  networksOf(ip: string, nowMs: number): Map<string, Ban> {
    const out = new Map<string, Ban>();
    for (const [filed, { ban, network }] of this.held) if (network && ban.expiresAt > nowMs && cidrContains(filed.slice(5), ip)) out.set(filed, ban);
    return out;
  }

  purgeExpired(nowMs: number): number {
    let purged = 0;
    for (const [filed, { ban }] of this.held) if (!(ban.expiresAt > nowMs) && this.held.delete(filed)) purged++;
    return purged;
  }

  /** The page's subjects, and the bans of the subjects that only one held ban has (several may share a subject text). */
  list(nowMs: number, query: BanPageQuery): { subjects: string[]; bans: Map<string, Ban> } {
    const live = [...this.held.values()].map((e) => e.ban).filter((b) => b.expiresAt > nowMs && (!query.scope || b.subject.startsWith(`${query.scope}:`)) && (!query.after || b.subject > query.after));
    const count = new Map<string, number>();
    for (const b of live) count.set(b.subject, (count.get(b.subject) ?? 0) + 1);
    const subjects = [...count.keys()].sort((a, b) => (a < b ? -1 : 1)).slice(0, query.limit);
    return { subjects, bans: new Map(live.filter((b) => count.get(b.subject) === 1).map((b) => [b.subject, b])) };
  }
}

/** The denial a live ban gives a check, its text from `reason`. */
function referenceDenial(ban: Ban, nowMs: number, reason: (ban: Ban) => string): Candidate {
  return {
    source: 'ban',
    policyId: ban.policyId,
    deny: true,
    status: ban.httpStatus === 429 ? 429 : 403,
    preview: ban.preview,
    reason: reason(ban),
    retryAfterSeconds: Math.max(1, Math.ceil((ban.expiresAt - nowMs) / 1000)),
  };
}

/** Where a key's ban is filed (throws, as the cache does, on a `cidr:` key that is no network). */
function fileOf(key: string): { filed: string; network: boolean } {
  if (key.startsWith('cidr:') && !key.includes('|')) return { filed: `cidr:${parseCidr(key.slice(5)).text}`, network: true };
  if (!key.startsWith('ip:') || canonicalIpv4(key.slice(3)) >= 0) return { filed: key, network: false };
  const address = tryParseIp(key.slice(3));
  return { filed: address === undefined ? key : addressSubject(address), network: false };
}

const NOW = 1_800_000_000_000;
/** A feed's duration: a renewed feed ban's id is made at its expiry less this. */
const FEED_DURATION = 86_400_000;

const host = fc.oneof(
  fc.integer({ min: 0, max: 7 }).map((n) => `192.0.2.${n}`),
  fc.constantFrom('0.0.0.0', '255.255.255.255', '192.0.3.1', '10.1.2.3'),
);
const network = fc.tuple(host, fc.constantFrom(0, 8, 16, 23, 24, 29, 30, 31, 32)).map(([a, bits]) => `${a}/${bits}`);
const key = fc.oneof(
  { weight: 5, arbitrary: host.map((a) => `ip:${a}`) },
  { weight: 1, arbitrary: host.map((a) => `ip:::ffff:${a}`) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 0, max: 4 }), fc.boolean()).map(([n, upper]) => `ip:${upper ? '2001:DB8' : '2001:db8'}::${n}`) },
  { weight: 4, arbitrary: network.map((n) => `cidr:${n}`) },
  { weight: 1, arbitrary: fc.constantFrom('cidr:2001:db8::/48', 'cidr:2001:db8::1/48', 'cidr:2001:db8::/64', 'cidr:::ffff:192.0.2.0/120', 'cidr:192.0.2.7') },
  { weight: 1, arbitrary: fc.constantFrom('user:7', 'apikey:k', 'cidr:192.0.2.0/24|path:/x', 'ip:192.0.2.1|path:/login', 'path:/admin') },
  { weight: 1, arbitrary: fc.constantFrom('ip:', 'ip:\u0000', 'ip:192.0.2.01', 'ip:1.2.3', 'ip:192.0.2.1 ', 'cidr:garbage', 'cidr:192.0.2.0/33', 'cidr:', '', ':') },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);

/** Everything of a ban but its subject and id, and how to make those. */
const banShape = fc.record({
  subject: fc.constantFrom('key', 'key', 'key', 'ip:192.0.2.1', 'cidr:192.0.2.0/24', 'ip:::ffff:192.0.2.3', '\u0000'),
  id: fc.constantFrom('start', 'start', 'renewed', 'text', 'look-alike'),
  policyId: fc.constantFrom('flood', 'manual', 'feed:x', '', '"]\u0000[', 'p'.repeat(40)),
  reason: fc.constantFrom('r', '', 'listed by the feed x', '"]\u0000[', 'é🎉'),
  evidenceCount: fc.oneof(fc.constantFrom(0, -0, 21, 1.5, Number.NaN, Number.POSITIVE_INFINITY), fc.double()),
  windowSeconds: fc.constantFrom(0, 60, -1),
  expiresAt: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: NOW - 2_000, max: NOW + 60_000 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 2 ** 50, Number.MAX_SAFE_INTEGER, -(2 ** 40)) }),
  duration: fc.oneof(fc.constantFrom(0, FEED_DURATION, 3_600_000), fc.integer({ min: -1_000, max: 2 ** 40 })),
  preview: fc.boolean(),
  escalationLevel: fc.integer({ min: 0, max: 3 }),
  origin: fc.constantFrom('aggregator', 'aggregator', 'manual', 'feed:x', 'feed:', 'other'),
  httpStatus: fc.constantFrom(403, 429, 418),
  createdBy: fc.constantFrom(null, 'alice', ''),
  evidence: fc.constantFrom('absent', 'absent', 'null', 'some'),
});

function makeBan(key: string, s: typeof banShape extends fc.Arbitrary<infer T> ? T : never): Ban {
  const subject = s.subject === 'key' ? key : s.subject;
  const startedAt = s.id === 'renewed' ? s.expiresAt - FEED_DURATION - 5_000 : s.expiresAt - s.duration;
  const id =
    s.id === 'start'
      ? banId(s.policyId, subject, startedAt)
      : s.id === 'renewed'
        ? banId(s.policyId, subject, s.expiresAt - FEED_DURATION)
        : s.id === 'look-alike'
          ? 'A'.repeat(22)
          : `id-${s.expiresAt}`;
  const ban: Ban = {
    banId: id,
    subject,
    policyId: s.policyId,
    reason: s.reason,
    evidenceCount: s.evidenceCount,
    windowSeconds: s.windowSeconds,
    startedAt,
    expiresAt: s.expiresAt,
    preview: s.preview,
    escalationLevel: s.escalationLevel,
    origin: s.origin,
    httpStatus: s.httpStatus,
    createdBy: s.createdBy,
  };
  if (s.evidence === 'null') ban.evidence = null;
  if (s.evidence === 'some') ban.evidence = { firstEventAt: 1, lastEventAt: 2, sampledEvents: 3, paths: [{ value: '/', count: 3 }], methods: [], statuses: [], userAgents: [], edges: [] };
  return ban;
}

const query = fc.record({
  scope: fc.option(fc.constantFrom('ip', 'cidr', 'user', 'path'), { nil: undefined }),
  after: fc.option(fc.oneof(key, fc.string({ maxLength: 6 })), { nil: undefined }),
  limit: fc.integer({ min: 1, max: 8 }),
});

const op = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('observe' as const), key, shape: banShape }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('lift' as const), key }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 5_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('purge' as const) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('check' as const),
      ip: fc.oneof(
        host,
        fc.integer({ min: 0, max: 5 }).map((n) => `2001:db8::${n}`),
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('list' as const), query }) },
);

/** A denial's text naming the ban it came from, so a text kept for a ban since replaced shows. */
const reason = (b: Ban) => `${b.subject}|${b.banId}|${b.expiresAt}|${b.reason}`;

/** `actual` holds the same items as `expected`, in any order. */
function sameItems<T>(actual: readonly T[] | undefined, expected: readonly T[]): void {
  expect(actual ?? []).toHaveLength(expected.length);
  for (const item of expected) expect(actual).toContainEqual(item);
}

describe('BanCache against a plain Map of bans (differential, fuzzed)', () => {
  it('agrees on every observe, lift, expiry, purge, check and listing, hostile keys and bans included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 120, size: 'large' }), fc.integer({ min: 1, max: 14 }), async (ops, maxBans) => {
        const cache = new BanCache({ maxBans, listSlice: 3 });
        const reference = new ReferenceBans(maxBans);
        const keys = new Set<string>();
        let now = NOW;
        for (const o of ops) {
          if (o.kind === 'observe' || o.kind === 'lift') {
            keys.add(o.key);
            const ban = o.kind === 'observe' ? makeBan(o.key, o.shape) : null;
            const threw = (f: () => void) => {
              try {
                f();
                return false;
              } catch {
                return true;
              }
            };
            expect(
              threw(() => cache.observe(o.key, ban)),
              o.key,
            ).toBe(threw(() => reference.observe(o.key, ban)));
          } else if (o.kind === 'advance') now += o.ms;
          else if (o.kind === 'purge') expect(cache.purgeExpired(now)).toBe(reference.purgeExpired(now));
          else if (o.kind === 'check') {
            const address = parseIp(o.ip);
            const expected = reference.address(o.ip, now);
            expect(cache.address(address, now)).toEqual(expected);
            expect(cache.addressDenial(address, now, reason)).toEqual(expected && referenceDenial(expected, now, reason));
            const networks = [...reference.networksOf(o.ip, now).values()];
            sameItems(cache.networksOf(address, now), networks);
            sameItems(
              cache.networkDenials(address, now, reason),
              networks.map((b) => referenceDenial(b, now, reason)),
            );
            for (const k of keys) expect(cache.subject(k, now), k).toEqual(reference.subject(k, now));
          } else {
            const page = await cache.list(now, o.query);
            const expected = reference.list(now, o.query);
            expect(page.map((b) => b.subject)).toEqual(expected.subjects);
            for (const b of page) if (expected.bans.has(b.subject)) expect(b).toEqual(expected.bans.get(b.subject));
          }
          expect(cache.size).toBe(reference.size);
          expect(cache.refused).toBe(reference.refused);
        }
      }),
      { numRuns: 200 },
    );
  }, 120_000);

  it('makes every ban it holds again as it came, for thousands of bans sharing few profiles, through replacements and lifts', () => {
    const cache = new BanCache();
    const reference = new ReferenceBans(cache.maxBans);
    const shapes = ['flood', 'feed:a', 'feed:b'];
    for (let i = 0; i < 3_000; i++) {
      const n = (i * 7919) % 2_000;
      const key = i % 3 === 0 ? `cidr:10.${n >> 8}.${n & 255}.0/24` : `ip:10.${n >> 8}.${n & 255}.9`;
      const policyId = shapes[i % 3]!;
      const expiresAt = NOW + 60_000 + (i % 97);
      const startedAt = i % 2 === 0 ? expiresAt - FEED_DURATION : expiresAt - FEED_DURATION - i;
      const ban: Ban = {
        banId: i % 2 === 0 || i % 5 === 0 ? banId(policyId, key, i % 2 === 0 ? startedAt : expiresAt - FEED_DURATION) : `other-${i}`,
        subject: key,
        policyId,
        reason: `listed by ${policyId}`,
        evidenceCount: i % 4 === 0 ? 0 : 20 + i / 7,
        windowSeconds: policyId === 'flood' ? 60 : 0,
        startedAt,
        expiresAt,
        preview: false,
        escalationLevel: i % 2,
        origin: policyId === 'flood' ? 'aggregator' : policyId,
        httpStatus: 403,
        createdBy: null,
      };
      const lift = i % 11 === 0;
      cache.observe(key, lift ? null : ban);
      reference.observe(key, lift ? null : ban);
    }
    expect(cache.size).toBe(reference.size);
    // Three policies, two escalation levels, two id rules (from the start, renewed) and ids kept as text: a handful of profiles.
    expect(cache.profileCount).toBeLessThanOrEqual(18);
    for (let n = 0; n < 2_000; n += 3) {
      const ip = `10.${n >> 8}.${n & 255}.9`;
      expect(cache.address(parseIp(ip), NOW)).toEqual(reference.address(ip, NOW));
      sameItems(cache.networksOf(parseIp(ip), NOW), [...reference.networksOf(ip, NOW).values()]);
    }
  }, 60_000);
});
