import { describe, expect, it } from 'vitest';
import { Allowlist, attributesFromRequest, PolicyBook, resolveVerdict } from '@banstream/core';
import type { Ban, PolicyRecord } from '@banstream/schemas';
import { BanCache } from './cache/ban-cache.js';
import { CountCache } from './cache/count-cache.js';
import { decideLocally, type LocalState } from './decide.js';
import type { Decision } from './decide.js';
import { WarmUp, type WarmUpMode } from './warm-up.js';

const NOW = 1_000_000;

function policy(id: string, spec: Record<string, unknown>): PolicyRecord {
  return { id, version: 1, description: '', owner: 'test', mode: (spec.mode as 'enforce' | undefined) ?? 'enforce', enabled: true, definition: JSON.stringify(spec), updatedBy: 'test', updatedAt: 0 };
}

/** A policy on /login keyed on the address, with this failure mode (none: the default). */
const login = (failureMode?: string, over: Record<string, unknown> = {}) => ({
  key: ['ip'],
  match: { paths: ['/login'] },
  threshold: { count: 3, interval: '1m' },
  action: { type: 'throttle', status: 403 },
  enforcement: failureMode ? { type: 'async', failureMode } : { type: 'async' },
  mode: 'enforce',
  ...over,
});

function state(policies: Record<string, Record<string, unknown>>): LocalState {
  const book = new PolicyBook();
  for (const [id, spec] of Object.entries(policies)) expect(book.apply(id, policy(id, spec)).kind).toBe('applied');
  return { bans: new BanCache(), counts: new CountCache(), allowlist: new Allowlist(), policies: book };
}

/** What checkWarming decides, without Kafka: the local decision, the failure modes, the verdict, marked. */
function warmCheck(s: LocalState, warmUp: WarmUp, path: string, ip = '192.0.2.7', now = NOW): Decision {
  const attrs = attributesFromRequest({ ip, method: 'GET', host: 'h', path }, now);
  const local = decideLocally(s, attrs, now, () => 0.5);
  if (!local.allowlisted) warmUp.decide(local, s.policies, attrs, now);
  return warmUp.mark(resolveVerdict(local.allowlisted, local.candidates));
}

const warm = (mode: WarmUpMode = 'closed') => new WarmUp(mode, 1_000);

describe('decisions while the caches load', () => {
  it("denies by a policy's failure mode closed, the default, with its status and source warming", () => {
    for (const mode of ['closed', undefined]) {
      const d = warmCheck(state({ login: login(mode) }), warm('open'), '/login');
      expect(d).toMatchObject({ allowed: false, status: 403, source: 'warming', policyId: 'login', retryAfterSeconds: 1 });
      expect(d.reason).toContain('still loading');
    }
  });

  it('allows by failure mode open, and says it was warming', () => {
    expect(warmCheck(state({ login: login('open') }), warm('closed'), '/login')).toMatchObject({ allowed: true, source: 'warming' });
  });

  it('limits each subject in process at the policy threshold by failure mode local', () => {
    const s = state({ login: login('local') });
    const w = warm('closed');
    const answers = Array.from({ length: 5 }, () => warmCheck(s, w, '/login'));
    expect(answers.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(answers[3]).toMatchObject({ source: 'warming', policyId: 'login', status: 403, limit: 3 });
    // Another address has a window of its own.
    expect(warmCheck(s, w, '/login', '192.0.2.8').allowed).toBe(true);
  });

  it('decides a request no enforced policy applies to by ENFORCER_WARMUP_MODE', () => {
    const s = state({ login: login('open'), preview: login('open', { match: { paths: ['/other'] }, mode: 'preview' }) });
    expect(warmCheck(s, warm('closed'), '/products')).toMatchObject({ allowed: false, status: 429, source: 'warming', policyId: 'warm-up', retryAfterSeconds: 1 });
    expect(warmCheck(s, warm('closed'), '/other')).toMatchObject({ allowed: false, policyId: 'warm-up' });
    expect(warmCheck(s, warm('open'), '/products')).toMatchObject({ allowed: true, source: 'warming' });
  });

  it('decides a status-matched policy (failed logins) by its failure mode, as a check has no status', () => {
    const failedLogins = (mode: string) => login(mode, { match: { paths: ['/login'], statuses: [401] }, action: { type: 'ban', banDuration: '1h' } });
    expect(warmCheck(state({ 'failed-logins': failedLogins('closed') }), warm('open'), '/login')).toMatchObject({ allowed: false, status: 403, source: 'warming', policyId: 'failed-logins' });
    expect(warmCheck(state({ 'failed-logins': failedLogins('open') }), warm('closed'), '/login')).toMatchObject({ allowed: true, source: 'warming' });
    // Elsewhere it does not apply: the sidecar-wide mode decides.
    expect(warmCheck(state({ 'failed-logins': failedLogins('open') }), warm('closed'), '/home')).toMatchObject({ allowed: false, policyId: 'warm-up' });
  });

  it("reports a preview policy's closed failure mode without enforcing it", () => {
    const d = warmCheck(state({ login: login('closed', { mode: 'preview' }) }), warm('open'), '/login');
    expect(d).toMatchObject({ allowed: true, source: 'warming' });
    expect(d.previewDenies.map((c) => [c.source, c.policyId])).toEqual([['warming', 'login']]);
  });

  it('still denies by a ban already read, and still allows by the allowlist', () => {
    const s = state({ login: login('open') });
    const ban: Ban = {
      banId: 'b',
      subject: 'ip:192.0.2.7',
      policyId: 'manual',
      reason: 'r',
      evidenceCount: 0,
      windowSeconds: 0,
      startedAt: 0,
      expiresAt: NOW + 60_000,
      preview: false,
      escalationLevel: 0,
      origin: 'manual',
      httpStatus: 403,
      createdBy: 'ops',
    };
    s.bans.observe('ip:192.0.2.7', ban);
    expect(warmCheck(s, warm('open'), '/login')).toMatchObject({ allowed: false, source: 'ban' });
    s.allowlist.add({ entry: '192.0.2.7' });
    expect(warmCheck(s, warm('closed'), '/products')).toMatchObject({ allowed: true, source: 'allowlist' });
  });
});
