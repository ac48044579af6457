import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { Allowlist, attributesFromRequest, canonicalSubject, PolicyBook, resolveVerdict } from '@banstream/core';
import type { PolicyRecord } from '@banstream/schemas';
import { manualBan } from '../../../test/support/bans.js';
import { BanCache } from './cache/ban-cache.js';
import { CountCache } from './cache/count-cache.js';
import { decideLocally, type LocalState } from './decide.js';
import type { Decision, Enforcer } from './enforcer.js';
import { banstreamPlugin } from './plugin.js';

/**
 * Attack review of issue 25 (failing tests for the lead): the path a policy glob or
 * a `path:` subject is compared with is the request target as the client wrote it,
 * percent-escapes and all, while the application (Fastify's router here; nginx's
 * locations, Express…) decodes them. `/%61dmin` is served by the /admin handler,
 * yet is not `/admin` to banstream: a manual ban on `path:/admin` and a policy
 * matching `/login` are bypassed with one escaped letter, and the aggregator (same
 * normalisePath) never counts such requests either.
 */
const NOW = Date.now();

function policyRecord(id: string, definition: Record<string, unknown>): PolicyRecord {
  return { id, version: 1, description: 'd', owner: 'o', mode: 'enforce', enabled: true, definition: JSON.stringify(definition), updatedBy: 't', updatedAt: 0 };
}

/** The enforcer's own decision (decideLocally + resolveVerdict) over local caches, without Kafka. */
function localEnforcer(state: LocalState): Enforcer {
  return {
    check: async (request: Parameters<Enforcer['check']>[0]) => {
      const attrs = attributesFromRequest(request, NOW);
      const local = decideLocally(state, attrs, NOW, () => 0.5);
      return resolveVerdict(local.allowlisted, local.candidates) as Decision;
    },
  } as unknown as Enforcer;
}

describe('attack: percent-encoded paths', () => {
  it('a manual ban on path:/admin refuses /%61dmin, which the application serves as /admin', async () => {
    const state: LocalState = { bans: new BanCache(), counts: new CountCache(), allowlist: new Allowlist(), policies: new PolicyBook() };
    const subject = canonicalSubject('path:/admin');
    state.bans.observe(subject, manualBan(subject));
    const app = Fastify();
    await app.register(banstreamPlugin, { enforcer: localEnforcer(state), edgeId: 'e1' });
    app.get('/admin', async () => 'the admin area');
    try {
      expect((await app.inject({ url: '/admin' })).statusCode).toBe(403);
      for (const url of ['/%61dmin', '/adm%69n', '/%61%64%6d%69%6e']) {
        const res = await app.inject({ url });
        expect(res.body === 'the admin area' ? `${url} reached the banned handler` : res.statusCode).toBe(403);
      }
    } finally {
      await app.close();
    }
  });

  it('a policy on /login applies to /log%69n, at check time and when counting', () => {
    const book = new PolicyBook();
    book.apply('login-per-ip', policyRecord('login-per-ip', { key: ['ip'], match: { paths: ['/login'] }, threshold: { count: 5, interval: '1m' }, action: { type: 'ban', banDuration: '1h' } }));
    const attrs = (path: string) => attributesFromRequest({ ip: '192.0.2.1', method: 'POST', host: 'shop.example', path, status: 401 }, NOW);
    expect(book.applicableAtCheck(attrs('/login')).map((p) => p.id)).toEqual(['login-per-ip']);
    expect(book.applicableAtCheck(attrs('/log%69n')).map((p) => p.id)).toEqual(['login-per-ip']);
    expect(book.applicable(attrs('/log%69n')).map((p) => p.id)).toEqual(['login-per-ip']);
  });
});
