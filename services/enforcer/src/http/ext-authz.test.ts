import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, createLogger } from '@banstream/platform';
import type { Decision, Enforcer } from '../enforcer.js';
import { EXT_AUTHZ_BODY_LIMIT } from './ext-authz-routes.js';
import { parseTrustedProxies } from './forwarded.js';
import type { AskedRequest, ForwardedHeaderNames } from './original-request.js';
import { sidecarRoutes } from './sidecar-routes.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const QUOTA = { policyId: 'api', limit: 100, remaining: 40, windowSeconds: 60 };
const ALLOW: Decision = { allowed: true, status: 200, source: 'none', reason: 'no policy denies this request', previewDenies: [], quota: QUOTA };
const THROTTLED: Decision = { allowed: false, status: 429, source: 'throttle', reason: 'over api', policyId: 'api', retryAfterSeconds: 30, previewDenies: [], quota: QUOTA };
const BANNED: Decision = { allowed: false, status: 403, source: 'ban', reason: 'banned by logins', policyId: 'logins', retryAfterSeconds: 600, previewDenies: [] };

/** The routes with an enforcer stand-in that records what it is asked and answers `decision`. */
async function sidecar(options: { decision?: Decision; prefix?: string; headerNames?: Partial<ForwardedHeaderNames> } = {}) {
  const asked: AskedRequest[] = [];
  const enforcer = { check: async (r: AskedRequest) => (asked.push(r), options.decision ?? ALLOW), bans: { list: () => [] } } as unknown as Enforcer;
  app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
  await app.register(sidecarRoutes, {
    enforcer,
    trustedProxies: parseTrustedProxies('127.0.0.1,10.0.0.0/8'),
    callers: parseTrustedProxies('127.0.0.1'),
    headerNames: options.headerNames,
    extAuthzPrefix: options.prefix,
  });
  return { app, asked };
}

describe('HTTP ext_authz: the original request', () => {
  it('takes the method as sent and the path after the prefix, query and all, and the host from Host', async () => {
    const { app, asked } = await sidecar();
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'] as const;
    for (const method of methods) {
      const res = await app.inject({ method, url: '/ext-authz/api/items/7?q=1', headers: { host: 'shop.example' }, remoteAddress: '127.0.0.1' });
      expect(res.statusCode).toBe(200);
    }
    expect(asked.map((a) => a.method)).toEqual([...methods]);
    expect(asked[0]).toMatchObject({ path: '/api/items/7?q=1', host: 'shop.example' });
    await app.inject({ method: 'GET', url: '/ext-authz', remoteAddress: '127.0.0.1' });
    await app.inject({ method: 'GET', url: '/ext-authz?x=1', remoteAddress: '127.0.0.1' });
    await app.inject({ method: 'GET', url: '/ext-authz/a%2Fb//c', remoteAddress: '127.0.0.1' });
    expect(asked.slice(-3).map((a) => a.path)).toEqual(['/', '/?x=1', '/a%2Fb//c']);
  });

  it('serves the prefix it is given, and nothing outside it', async () => {
    const { app, asked } = await sidecar({ prefix: '/envoy/check' });
    expect((await app.inject({ method: 'DELETE', url: '/envoy/check/users/1', remoteAddress: '127.0.0.1' })).statusCode).toBe(200);
    expect(asked[0]).toMatchObject({ method: 'DELETE', path: '/users/1' });
    expect((await app.inject({ method: 'GET', url: '/ext-authz/users/1' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/envoy/checkers' })).statusCode).toBe(404);
  });

  it("believes the client address and identity from a trusted proxy's configured headers only", async () => {
    const { app, asked } = await sidecar({ headerNames: { clientIp: 'x-envoy-external-address' } });
    const claims = { 'x-envoy-external-address': '198.51.100.7', 'x-forwarded-for': '6.6.6.6', 'x-banstream-user': 'alice', 'x-user-id': 'mallory' };
    await app.inject({ method: 'GET', url: '/ext-authz/', remoteAddress: '10.0.0.5', headers: claims });
    await app.inject({ method: 'GET', url: '/ext-authz/', remoteAddress: '203.0.113.9', headers: claims });
    expect(asked[0]).toMatchObject({ ip: '198.51.100.7', userId: 'alice' });
    expect(asked[1]).toMatchObject({ ip: '203.0.113.9' });
    expect(asked[1]!.userId).toBeUndefined();
  });
});

describe('HTTP ext_authz: the answer', () => {
  it('allows with 200, an empty body and the RateLimit headers', async () => {
    const { app } = await sidecar();
    const res = await app.inject({ method: 'POST', url: '/ext-authz/api', remoteAddress: '127.0.0.1' });
    expect([res.statusCode, res.body]).toEqual([200, '']);
    expect(res.headers).toMatchObject({ 'ratelimit-policy': '"api";q=100;w=60', ratelimit: '"api";r=40;t=60' });
  });

  it('denies with the decision status, Retry-After and a problem+json body', async () => {
    const throttled = await sidecar({ decision: THROTTLED });
    const res = await throttled.app.inject({ method: 'GET', url: '/ext-authz/api', remoteAddress: '127.0.0.1' });
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(30);
    expect(res.headers.ratelimit).toBe('"api";r=0;t=30');
    expect(res.json()).toMatchObject({ status: 429, title: 'Too many requests', policy: 'api', detail: 'over api' });
    await app!.close();
    const banned = await sidecar({ decision: BANNED });
    const ban = await banned.app.inject({ method: 'PUT', url: '/ext-authz/login', remoteAddress: '127.0.0.1' });
    expect([ban.statusCode, ban.json().type, ban.json().policy]).toEqual([403, 'https://banstream.dev/problems/banned', 'logins']);
  });

  it('reads and drops a body of any type up to the cap, refuses one over it with 413, and leaves /v1/check parsing JSON', async () => {
    const { app, asked } = await sidecar();
    const send = (payload: string, type?: string) => app.inject({ method: 'POST', url: '/ext-authz/upload', remoteAddress: '127.0.0.1', payload, headers: type ? { 'content-type': type } : {} });
    expect((await send('', 'application/json')).statusCode).toBe(200);
    expect((await send('{not json', 'application/json')).statusCode).toBe(200);
    expect((await send('x'.repeat(EXT_AUTHZ_BODY_LIMIT), 'application/octet-stream')).statusCode).toBe(200);
    expect((await send('a=1', 'application/x-www-form-urlencoded')).statusCode).toBe(200);
    expect((await send('x'.repeat(EXT_AUTHZ_BODY_LIMIT + 1), 'text/plain')).statusCode).toBe(413);
    expect(asked).toHaveLength(4);
    const check = await app.inject({ method: 'POST', url: '/v1/check', remoteAddress: '127.0.0.1', payload: { ip: '203.0.113.7', method: 'GET', host: 'h', path: '/' } });
    expect(check.statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/v1/check', remoteAddress: '127.0.0.1', payload: 'x', headers: { 'content-type': 'text/csv' } })).statusCode).toBe(415);
  });

  it('answers a client address that is not one with a 400 naming it', async () => {
    const asked: AskedRequest[] = [];
    const { BanstreamError } = await import('@banstream/core');
    const enforcer = {
      check: async (r: AskedRequest) => {
        asked.push(r);
        throw new BanstreamError('SUBJECT_INVALID_IP', `invalid IP address: ${JSON.stringify(r.ip)}`);
      },
      bans: { list: () => [] },
    } as unknown as Enforcer;
    app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
    await app.register(sidecarRoutes, { enforcer, trustedProxies: parseTrustedProxies('127.0.0.1') });
    const res = await app.inject({ method: 'GET', url: '/ext-authz/', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': 'not-an-ip' } });
    expect([res.statusCode, res.json().code]).toEqual([400, 'SUBJECT_INVALID_IP']);
    expect(res.json().detail).toContain('not-an-ip');
  });
});
