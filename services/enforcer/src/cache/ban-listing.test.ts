import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Ban } from '@banstream/schemas';
import { BanCache } from './ban-cache.js';
import { BanPage, type BanPageQuery } from './ban-page.js';

const ban = (subject: string, expiresAt = 10_000): Ban => ({
  banId: subject,
  subject,
  policyId: 'p',
  reason: 'r',
  evidenceCount: 1,
  windowSeconds: 60,
  startedAt: 0,
  expiresAt,
  preview: false,
  escalationLevel: 0,
  origin: 'aggregator',
  httpStatus: 403,
  createdBy: null,
});

/** What a page must hold: the old full sort, the reference. */
function reference(bans: readonly Ban[], nowMs: number, q: BanPageQuery): string[] {
  const live = new Set(bans.filter((b) => b.expiresAt > nowMs && (!q.scope || b.subject.startsWith(`${q.scope}:`)) && (!q.after || b.subject > q.after)).map((b) => b.subject));
  return [...live].sort((a, b) => (a < b ? -1 : 1)).slice(0, q.limit);
}

const ipv4 = fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 255 })).map(([c, d]) => `ip:192.0.${c}.${d}`);
/** Subjects of every kind the cache files apart: IPv4 (its table), IPv6, networks, users, composites. */
const subject = fc.oneof(
  ipv4,
  fc.integer({ min: 0, max: 40 }).map((n) => `ip:2001:db8::${n.toString(16)}`),
  fc.constantFrom('cidr:10.0.0.0/8', 'cidr:198.51.100.0/24', 'cidr:2001:db8::/48', 'cidr:192.0.2.0/24|path:/login'),
  fc.string({ minLength: 1, maxLength: 6 }).map((s) => `user:${encodeURIComponent(s)}`),
  fc.integer({ min: 0, max: 30 }).map((n) => `ip:192.0.2.${n}|path:/x`),
);
const query = fc.record({
  scope: fc.option(fc.constantFrom('ip', 'cidr', 'user', 'apikey'), { nil: undefined }),
  after: fc.option(fc.oneof(subject, fc.string({ maxLength: 8 })), { nil: undefined }),
  limit: fc.integer({ min: 1, max: 12 }),
});

/** Every page of the cache's listing, following `next` as a client of GET /v1/bans does. */
async function pageThrough(cache: BanCache, nowMs: number, scope: string | undefined, limit: number): Promise<string[]> {
  const listed: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await cache.list(nowMs, { scope, after, limit });
    listed.push(...page.map((b) => b.subject));
    if (page.length < limit) return listed;
    after = page[page.length - 1]!.subject;
  }
}

describe('BanPage', () => {
  it('picks what the full sort picks, for any bans offered in any order, duplicates and hostile text included', () => {
    const hostile = fc.oneof(subject, fc.string({ maxLength: 10 }), fc.constantFrom('', ':', 'ip:', '\u{10FFFF}', 'ip:\u0000'));
    fc.assert(
      fc.property(fc.array(fc.tuple(hostile, fc.integer({ min: 0, max: 20 })), { maxLength: 120 }), query, (offers, q) => {
        const bans = offers.map(([s, expiresAt]) => ban(s, expiresAt));
        const page = new BanPage(10, q);
        for (const b of bans) page.offer(b);
        expect(page.bans().map((b) => b.subject)).toEqual(reference(bans, 10, q));
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses a page of no bans', () => {
    expect(() => new BanPage(0, { limit: 0 })).toThrow(RangeError);
  });
});

describe('BanCache.list', () => {
  it('pages through every live ban exactly once, in subject order, whatever the limit and scope', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(subject, fc.integer({ min: 0, max: 20 })), { maxLength: 150 }), query, async (entries, q) => {
        const cache = new BanCache({ listSlice: 3 });
        const held = new Map<string, Ban>();
        for (const [s, expiresAt] of entries) {
          cache.observe(s, ban(s, expiresAt));
          held.set(s, ban(s, expiresAt));
        }
        const all = reference([...held.values()], 10, { scope: q.scope, limit: Number.MAX_SAFE_INTEGER });
        expect(await pageThrough(cache, 10, q.scope, q.limit)).toEqual(all);
        expect((await cache.list(10, q)).map((b) => b.subject)).toEqual(reference([...held.values()], 10, q));
      }),
      { numRuns: 200 },
    );
  });

  it('lists every ban present throughout, once and in order, while bans are set, lifted and purged between its pauses', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Mostly IPv4: the table whose entries move under a paused scan.
        fc.tuple(fc.uniqueArray(ipv4, { minLength: 200, maxLength: 700 }), fc.uniqueArray(subject, { maxLength: 20 })).map(([a, b]) => [...new Set([...a, ...b])]),
        fc.array(fc.tuple(fc.constantFrom('set', 'set', 'lift', 'purge'), fc.integer({ min: 0, max: 4095 })), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 400 }),
        async (stable, churn, limit) => {
          const cache = new BanCache({ listSlice: 8 });
          for (const s of stable) cache.observe(s, ban(s));
          // Other addresses come and go meanwhile, a few per pause: the IPv4 table grows and shifts entries back.
          const churned = (n: number) => `ip:10.0.${n >> 8}.${n & 255}`;
          let listing = true;
          const changes = (async () => {
            for (let i = 0; listing; i = (i + 1) % churn.length) {
              const [op, n] = churn[i]!;
              for (let k = 0; k < 8; k++) {
                const s = churned((n + k * 613) & 4095);
                if (op === 'set') cache.observe(s, ban(s, n % 3 === 0 ? 5 : 10_000));
                else if (op === 'lift') cache.observe(s, null);
              }
              if (op === 'purge') cache.purgeExpired(10);
              await new Promise((resolve) => setImmediate(resolve));
            }
          })();
          const listed = await pageThrough(cache, 10, undefined, limit);
          listing = false;
          await changes;
          for (let i = 1; i < listed.length; i++) expect(listed[i - 1]! < listed[i]!).toBe(true);
          const expected = new Set(stable);
          expect(listed.filter((s) => expected.has(s))).toEqual([...expected].sort((a, b) => (a < b ? -1 : 1)));
          for (const s of listed) expect(expected.has(s) || s.startsWith('ip:10.0.')).toBe(true);
        },
      ),
      { numRuns: 25 },
    );
  }, 30_000);

  it('builds one page at a time, in the order asked', async () => {
    const cache = new BanCache({ listSlice: 1 });
    for (let i = 0; i < 50; i++) cache.observe(`ip:192.0.2.${i}`, ban(`ip:192.0.2.${i}`));
    const done: number[] = [];
    const pages = [1, 2, 3].map((n) => cache.list(0, { limit: n }).then((p) => done.push(p.length)));
    expect(cache.listingsPending).toBe(3);
    await Promise.all(pages);
    expect(done).toEqual([1, 2, 3]);
    expect(cache.listingsPending).toBe(0);
  });
});
