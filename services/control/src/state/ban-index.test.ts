import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Ban } from '@banstream/schemas';
import { BanIndex } from './ban-index.js';
import { searchBans, type BanQuery } from './ban-search.js';
import { ControlState } from './control-state.js';

const ban = (subject: string, over: Partial<Ban> = {}): Ban => ({
  banId: subject,
  subject,
  policyId: 'p',
  reason: 'r',
  evidenceCount: 1,
  windowSeconds: 60,
  startedAt: 0,
  expiresAt: 1000,
  preview: false,
  escalationLevel: 0,
  origin: 'aggregator',
  httpStatus: 403,
  createdBy: null,
  ...over,
});

describe('BanIndex', () => {
  it('answers pages, totals and filters in subject order', () => {
    const state = new ControlState(10);
    for (const b of [
      ban('ip:203.0.113.9'),
      ban('ip:203.0.113.10', { origin: 'manual', policyId: 'manual' }),
      ban('cidr:203.0.113.0/24'),
      ban('user:42', { policyId: 'login' }),
      ban('ip:192.0.2.1', { expiresAt: 10 }),
    ])
      state.applyBan(b.subject, b);
    const subjects = (q: Omit<BanQuery, 'limit'>) => state.banIndex.search({ ...q, limit: 10 }, 100).bans.map((b) => b.subject);
    expect(subjects({})).toEqual(['cidr:203.0.113.0/24', 'ip:203.0.113.10', 'ip:203.0.113.9', 'user:42']);
    expect(subjects({ subject: '203.0.113.' })).toEqual(['cidr:203.0.113.0/24', 'ip:203.0.113.10', 'ip:203.0.113.9']);
    expect(subjects({ subject: 'ip:203.0.113.1', origin: 'manual' })).toEqual(['ip:203.0.113.10']);
    expect(subjects({ scope: 'ip', includeExpired: true })).toEqual(['ip:192.0.2.1', 'ip:203.0.113.10', 'ip:203.0.113.9']);
    expect(state.banIndex.search({ limit: 2 }, 100)).toMatchObject({ total: 4, next: 'ip:203.0.113.10' });
    // Time moves the expired ban back into the listing when it steps back, and out again.
    expect(subjects({ scope: 'ip' })).toEqual(['ip:203.0.113.10', 'ip:203.0.113.9']);
    expect(state.banIndex.search({ scope: 'ip', limit: 10 }, 5).total).toBe(3);
    expect(state.banIndex.expiredOf('aggregator', 100).map((b) => b.subject)).toEqual(['ip:192.0.2.1']);
    state.applyBan('ip:192.0.2.1', null);
    expect(state.banIndex.size).toBe(4);
    expect(() => state.banIndex.search({ scope: 'ip:x', limit: 1 }, 100)).toThrow(/no colon/);
  });

  it('holds a record under its key when its value names another subject', () => {
    const state = new ControlState(10);
    state.applyBan('ip:192.0.2.1', ban('ip:192.0.2.2'));
    expect(state.banIndex.search({ limit: 10 }, 0).bans.map((b) => b.subject)).toEqual(['ip:192.0.2.1']);
    state.applyBan('ip:192.0.2.1', null);
    expect(state.banIndex.size).toBe(0);
  });
});

/** The scopes, values and filter texts a hostile or careless writer could hand over: colons anywhere, none, odd code units. */
const text = fc.string({ unit: fc.constantFrom('a', 'b', '1', '.', ':', '/', '\u0000', '\uffff', 'é'), maxLength: 5 });
const subjectArb = fc.oneof(
  fc.tuple(fc.constantFrom('ip', 'cidr', 'user', 'a'), text).map(([s, v]) => `${s}:${v}`),
  text,
  fc.string({ maxLength: 6 }),
);
const fieldsArb = fc.record({
  policyId: fc.constantFrom('p', 'q', 'manual', '"]'),
  origin: fc.constantFrom('aggregator', 'manual', 'feed:x'),
  // Several seconds, as the index files bans by second of expiry.
  expiresAt: fc.integer({ min: 0, max: 5000 }),
});
const queryArb = fc.record(
  {
    scope: fc.constantFrom('ip', 'user', 'a', 'x', ''),
    subject: fc.oneof(text, subjectArb),
    policy: fc.constantFrom('p', 'manual', '"]'),
    origin: fc.constantFrom('aggregator', 'manual', 'feed:x'),
    includeExpired: fc.boolean(),
    after: fc.oneof(subjectArb, text),
  },
  { requiredKeys: [] },
);
type Op =
  | { kind: 'set'; subject: string; fields: Partial<Ban> }
  | { kind: 'lift'; pick: number }
  | { kind: 'query'; query: Omit<BanQuery, 'limit'>; limit: number; now: number; afterHeld: number | null; nowHeld: number | null };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('set' as const), subject: subjectArb, fields: fieldsArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('lift' as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('query' as const),
      query: queryArb,
      limit: fc.integer({ min: 1, max: 12 }),
      now: fc.integer({ min: -10, max: 5100 }),
      // Now exactly at a held ban's expiry: the boundary.
      nowHeld: fc.option(fc.nat()),
      // A cursor on a held subject, as the next page's is.
      afterHeld: fc.option(fc.nat()),
    }),
  },
);

describe('BanIndex against the pass over every ban (searchBans)', () => {
  it('answers every query as the reference does, through sets, replacements, lifts and a clock that may step back', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 80 }), (ops) => {
        const state = new ControlState(10, 2);
        for (const op of ops) {
          if (op.kind === 'set') state.applyBan(op.subject, ban(op.subject, op.fields));
          else if (op.kind === 'lift') {
            const keys = [...state.bans.keys()];
            if (keys.length > 0) state.applyBan(keys[op.pick % keys.length]!, null);
          } else {
            const keys = [...state.bans.keys()];
            const now = op.nowHeld !== null && keys.length > 0 ? state.bans.get(keys[op.nowHeld % keys.length]!)!.expiresAt : op.now;
            const query = { ...op.query, limit: op.limit, ...(op.afterHeld !== null && keys.length > 0 ? { after: keys[op.afterHeld % keys.length]! } : {}) };
            expect(state.banIndex.search(query, now)).toEqual(searchBans(state.bans.values(), query, now));
            const expired = [...state.bans.values()].filter((b) => b.origin === 'manual' && b.expiresAt <= now).map((b) => b.subject);
            expect(
              state.banIndex
                .expiredOf('manual', now)
                .map((b) => b.subject)
                .sort(),
            ).toEqual(expired.sort());
          }
        }
        expect(state.banIndex.size).toBe(state.bans.size);
      }),
      { numRuns: 2000 },
    );
  });

  it('pages through every match once, in order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(subjectArb, fieldsArb), { maxLength: 300 }), queryArb, fc.integer({ min: 1, max: 7 }), (sets, q, limit) => {
        const index = new BanIndex(3);
        const held = new Map<string, Ban>();
        for (const [subject, fields] of sets) {
          const b = ban(subject, fields);
          index.replace(held.get(subject), b);
          held.set(subject, b);
        }
        const { after: _after, ...fromStart } = q;
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let i = 0; i < 400; i++) {
          const page = index.search(cursor === undefined ? { ...fromStart, limit } : { ...fromStart, limit, after: cursor }, 2500);
          seen.push(...page.bans.map((b) => b.subject));
          if (page.next === null) break;
          cursor = page.next;
        }
        expect(seen).toEqual(searchBans(held.values(), { ...fromStart, limit: 1_000_000 }, 2500).bans.map((b) => b.subject));
      }),
      { numRuns: 500 },
    );
  });
});
