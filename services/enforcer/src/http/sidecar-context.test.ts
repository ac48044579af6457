import { afterEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { Allowlist, attributesFromRequest, normaliseSubject, PolicyBook, resolveVerdict } from '@banstream/core';
import type { Ban, PolicyRecord } from '@banstream/schemas';
import { BanCache } from '../cache/ban-cache.js';
import { CountCache } from '../cache/count-cache.js';
import { decideLocally, type LocalState } from '../decide.js';
import type { Decision, Enforcer } from '../enforcer.js';
import { parseTrustedProxies } from './forwarded.js';
import type { ForwardedHeaderNames } from './original-request.js';
import { sidecarRoutes } from './sidecar-routes.js';

const NOW = Date.now();
/** What a proxy with a GeoIP module and a router would be configured to send. */
const CONTEXT_HEADERS: Partial<ForwardedHeaderNames> = { country: 'x-banstream-country', region: 'x-banstream-region', asn: 'x-banstream-asn', route: 'x-banstream-route' };

const ban = (subject: string, origin: 'manual' | 'aggregator', policyId = 'manual'): Ban => ({
  banId: subject,
  subject,
  policyId,
  reason: 'r',
  evidenceCount: 0,
  windowSeconds: 0,
  startedAt: NOW,
  expiresAt: NOW + 3_600_000,
  preview: false,
  escalationLevel: 0,
  origin,
  httpStatus: 403,
  createdBy: origin === 'manual' ? 'ops' : null,
});

/** Manual bans as the control API writes them, and a ban policy keyed on the country with one ban it made. */
function state(): LocalState {
  const s: LocalState = { bans: new BanCache(), counts: new CountCache(), allowlist: new Allowlist(), policies: new PolicyBook() };
  for (const typed of ['country:AU', 'asn:13335', 'route:/users/:id', 'region:FR-IDF']) {
    const subject = normaliseSubject(typed);
    s.bans.observe(subject, ban(subject, 'manual'));
  }
  const spec = { key: ['country'], threshold: { count: 100, interval: '1m' }, action: { type: 'ban', banDuration: '1h' } };
  const policy: PolicyRecord = { id: 'by-country', version: 1, description: '', owner: 't', mode: 'enforce', enabled: true, definition: JSON.stringify(spec), updatedBy: 't', updatedAt: 0 };
  expect(s.policies.apply('by-country', policy).kind).toBe('applied');
  s.bans.observe('country:KP', ban('country:KP', 'aggregator', 'by-country'));
  return s;
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The sidecar's routes over real caches and the real local decision. */
async function sidecar(headerNames?: Partial<ForwardedHeaderNames>): Promise<FastifyInstance> {
  const s = state();
  const enforcer = {
    bans: s.bans,
    check: async (request: Parameters<Enforcer['check']>[0]) => {
      const local = decideLocally(s, attributesFromRequest(request, NOW), NOW, () => 0.5);
      return resolveVerdict(local.allowlisted, local.candidates) as Decision;
    },
  } as unknown as Enforcer;
  app = Fastify();
  await app.register(sidecarRoutes, { enforcer, trustedProxies: parseTrustedProxies('127.0.0.1'), callers: parseTrustedProxies('127.0.0.1'), headerNames });
  return app;
}

const auth = (a: FastifyInstance, remoteAddress: string, headers: Record<string, string>) =>
  a.inject({ method: 'GET', url: '/v1/auth', remoteAddress, headers: { 'x-forwarded-for': '198.51.100.7', 'x-original-uri': '/', ...headers } });

describe('GET /v1/auth: country, region, ASN and route from a trusted proxy', () => {
  it('applies a country ban through the configured header of a trusted proxy, as POST /v1/check does', async () => {
    const a = await sidecar(CONTEXT_HEADERS);
    const denied = await auth(a, '127.0.0.1', { 'x-banstream-country': 'au' });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().detail).toContain('country:AU is banned');
    expect((await auth(a, '127.0.0.1', { 'x-banstream-country': 'NZ' })).statusCode).toBe(204);
    const check = await a.inject({ method: 'POST', url: '/v1/check', remoteAddress: '127.0.0.1', payload: { ip: '198.51.100.7', method: 'GET', host: 'h', path: '/', country: 'AU' } });
    expect(check.json()).toMatchObject({ allowed: false, source: 'ban' });
  });

  it('ignores the same headers from a peer that is not a trusted proxy', async () => {
    const a = await sidecar(CONTEXT_HEADERS);
    const claims = { 'x-banstream-country': 'AU', 'x-banstream-asn': '13335', 'x-banstream-route': '/users/:id', 'x-banstream-region': 'FR-IDF' };
    expect((await auth(a, '203.0.113.9', claims)).statusCode).toBe(204);
  });

  it('applies ASN, region and route bans, and a policy keyed on the country, each from its header', async () => {
    const a = await sidecar(CONTEXT_HEADERS);
    for (const [name, value] of [
      ['x-banstream-asn', '13335'],
      ['x-banstream-region', 'fr-idf'],
      ['x-banstream-route', '/users/:id'],
    ] as const) {
      expect((await auth(a, '127.0.0.1', { [name]: value })).statusCode, name).toBe(403);
    }
    expect((await auth(a, '127.0.0.1', { 'x-banstream-asn': '13336', 'x-banstream-route': '/users' })).statusCode).toBe(204);
    const byPolicy = await auth(a, '127.0.0.1', { 'x-banstream-country': 'KP' });
    expect([byPolicy.statusCode, byPolicy.json().detail]).toEqual([403, expect.stringContaining('country:KP is banned')]);
  });

  it('reads none of them unless configured (the default): the gap AuthGaps reports', async () => {
    const a = await sidecar();
    expect((await auth(a, '127.0.0.1', { 'x-banstream-country': 'AU', 'x-banstream-asn': '13335', 'cf-ipcountry': 'AU' })).statusCode).toBe(204);
  });

  it('refuses a value that is not one, with 400 naming the attribute and the header', async () => {
    const a = await sidecar(CONTEXT_HEADERS);
    const cases: [string, string, string][] = [
      ['x-banstream-country', 'AUS', 'ISO 3166-1 alpha-2'],
      ['x-banstream-country', 'AU,NZ', 'ISO 3166-1 alpha-2'],
      ['x-banstream-region', 'FR_IDF', 'ISO 3166-2'],
      ['x-banstream-asn', 'AS13335', 'AS number'],
      ['x-banstream-asn', '4294967296', 'AS number'],
      ['x-banstream-asn', '013335', 'AS number'],
      ['x-banstream-route', `/${'a'.repeat(600)}`, 'at most 512 characters'],
    ];
    for (const [name, value, expected] of cases) {
      const refused = await auth(a, '127.0.0.1', { [name]: value });
      expect([refused.statusCode, refused.json().code], `${name}: ${value}`).toEqual([400, 'SUBJECT_INVALID_ATTRIBUTE']);
      expect(refused.json().detail).toContain(`header ${name} `);
      expect(refused.json().detail).toContain(expected);
      expect(refused.json().detail.length).toBeLessThan(300);
    }
  });
});
