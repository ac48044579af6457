import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Allowlist, attributesFromRequest, canonicalAllowEntry, canonicalSubject, compileKey, PolicyBook, resolveVerdict, type SubjectFn } from '@banstream/core';
import { manualBan } from '../../../test/support/bans.js';
import { ALLOWLIST_KINDS, subjectCases, type Carrier } from '../../../test/support/subjects.js';
import { BanCache } from './cache/ban-cache.js';
import { CountCache } from './cache/count-cache.js';
import { decideLocally, type LocalState } from './decide.js';

const NOW = 1_000_000;
const RUNS = 3_000;
/** Thousands of runs take seconds on a busy machine: more than vitest's default 5 s. */
const TIMEOUT_MS = 60_000;

const fresh = (): LocalState => ({ bans: new BanCache(), counts: new CountCache(), allowlist: new Allowlist(), policies: new PolicyBook() });
const decide = (state: LocalState, c: Carrier) => {
  const local = decideLocally(state, attributesFromRequest({ method: 'GET', host: 'shop.example', path: '/', ...c }, NOW), NOW, () => 0.5);
  return resolveVerdict(local.allowlisted, local.candidates);
};
const options = { maxUserLength: 600, minBits: { v4: 0, v6: 0 }, wellFormed: false };

/**
 * Deliverable 6 over the pure decision: every subject the control API accepts (its
 * canonicalSubject, its canonicalAllowEntry), written into the caches the way the
 * enforcer's feeds write it, decides a request that carries it, and no other.
 */
describe('every subject the control API accepts is enforced', () => {
  it(
    'a manual ban written as the API writes it denies a request carrying it, and only such requests',
    () => {
      fc.assert(
        fc.property(subjectCases(options), (c) => {
          const state = fresh();
          const subject = canonicalSubject(c.typed);
          state.bans.observe(subject, manualBan(subject, { startedAt: 0, expiresAt: NOW + 60_000 }));
          const denied = decide(state, c.carrier);
          expect(denied, `${c.kind} ${JSON.stringify(c.typed)} → ${subject}`).toMatchObject({ allowed: false, source: 'ban', policyId: 'manual' });
          if (c.other) expect(decide(state, c.other).allowed).toBe(true);
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'an allowlist entry written as the API writes it allows a request carrying it, over a ban',
    () => {
      fc.assert(
        fc.property(subjectCases(options), (c) => {
          if (!ALLOWLIST_KINDS.has(c.kind)) {
            expect(() => canonicalAllowEntry(c.typed)).toThrow(/allowlist entries are an IP, a CIDR/);
            return;
          }
          const state = fresh();
          const subject = canonicalSubject(c.typed);
          state.bans.observe(subject, manualBan(subject, { startedAt: 0, expiresAt: NOW + 60_000 }));
          state.allowlist.add({ entry: canonicalAllowEntry(c.typed), reason: 'ours' });
          expect(decide(state, c.carrier), `${c.kind} ${JSON.stringify(c.typed)}`).toMatchObject({ allowed: true, source: 'allowlist' });
          if (c.other && c.kind !== 'user' && c.kind !== 'apikey') expect(decide(state, c.other).source).not.toBe('allowlist');
          if (c.other && (c.kind === 'user' || c.kind === 'apikey')) expect(decide(state, c.other).source).toBe('none');
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'reads back every subject it lists: the canonical text of a canonical subject is itself',
    () => {
      fc.assert(
        fc.property(subjectCases(options), (c) => {
          const subject = canonicalSubject(c.typed);
          expect(canonicalSubject(subject)).toBe(subject);
          if (ALLOWLIST_KINDS.has(c.kind)) expect(canonicalAllowEntry(subject)).toBe(subject);
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'writes each subject as a policy keyed on its dimensions counts a request carrying it (compileKey)',
    () => {
      const keys: Partial<Record<string, SubjectFn>> = {
        user: compileKey(['user']),
        apikey: compileKey(['apikey']),
        path: compileKey(['path']),
        country: compileKey(['country']),
        'ip+path': compileKey(['ip', 'path']),
      };
      fc.assert(
        fc.property(subjectCases(options), (c) => {
          const attrs = attributesFromRequest({ method: 'GET', host: 'h', path: '/', ...c.carrier }, NOW);
          const key = keys[c.kind] ?? (c.kind === 'header' ? compileKey([`header:${Object.keys(c.carrier.headers!)[0]!}`]) : undefined);
          if (key) expect(canonicalSubject(c.typed)).toBe(key(attrs));
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it('takes composite subjects whichever part is typed first, as the aggregator writes them', () => {
    expect(canonicalSubject('ip:192.0.2.7|path:/login')).toBe('ip:192.0.2.7|path:/login');
    expect(canonicalSubject('path:/login|ip:192.0.2.7')).toBe('ip:192.0.2.7|path:/login');
    expect(canonicalSubject('cidr:10.1.2.3/8|path:/x')).toBe('cidr:10.0.0.0/8|path:/x');
    const attrs = attributesFromRequest({ ip: '192.0.2.7', method: 'GET', host: 'h', path: '/login' }, NOW);
    expect(canonicalSubject('path:/login|ip:192.0.2.7')).toBe(compileKey(['path', 'ip'])(attrs));
  });

  it('refuses an allowlist entry of another scope, a composite one included', () => {
    expect(() => canonicalAllowEntry('ip:192.0.2.7|path:/login')).toThrow(/allowlist entries are an IP, a CIDR/);
    expect(() => canonicalAllowEntry('country:FR')).toThrow(/allowlist entries are an IP, a CIDR/);
  });
});
