import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, createLogger } from '@banstream/platform';
import type { Decision, Enforcer } from '../enforcer.js';
import { parseTrustedProxies } from './forwarded.js';
import type { AskedRequest, ForwardedHeaderNames } from './original-request.js';
import { sidecarRoutes } from './sidecar-routes.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const ALLOW: Decision = { allowed: true, status: 200, source: 'none', reason: 'no policy denies this request', previewDenies: [] };

/** The routes with an enforcer stand-in that records what it is asked. */
async function sidecar(headerNames?: Partial<ForwardedHeaderNames>): Promise<{ app: FastifyInstance; asked: AskedRequest[] }> {
  const asked: AskedRequest[] = [];
  const enforcer = { check: async (r: AskedRequest) => (asked.push(r), ALLOW), bans: { list: () => [] } } as unknown as Enforcer;
  app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
  await app.register(sidecarRoutes, {
    enforcer,
    trustedProxies: parseTrustedProxies('127.0.0.1,10.0.0.0/8'),
    callers: parseTrustedProxies('127.0.0.1,::1'),
    headerNames,
  });
  return { app, asked };
}

/** Every header a client might send to choose its address or identity. */
const CLIENT_CLAIMS = {
  'x-forwarded-for': '6.6.6.6',
  'x-real-ip': '6.6.6.7',
  'x-user-id': 'vip',
  'x-api-key': 'vip-key',
  'x-banstream-user': 'vip',
  'x-banstream-api-key': 'vip-key',
};

describe('GET /v1/auth: the client address and identity', () => {
  it("believes none of a client's own headers when the peer is not a trusted proxy", async () => {
    const { app, asked } = await sidecar();
    expect((await app.inject({ method: 'GET', url: '/v1/auth', remoteAddress: '203.0.113.9', headers: CLIENT_CLAIMS })).statusCode).toBe(204);
    expect(asked[0]).toMatchObject({ ip: '203.0.113.9' });
    expect(asked[0]!.userId).toBeUndefined();
    expect(asked[0]!.apiKey).toBeUndefined();
  });

  it("takes the user and API key from a trusted proxy's identity headers only, never X-User-Id or X-Api-Key", async () => {
    const { app, asked } = await sidecar();
    await app.inject({
      method: 'GET',
      url: '/v1/auth',
      remoteAddress: '10.0.0.5',
      headers: { 'x-user-id': 'mallory', 'x-api-key': 'stolen', 'x-banstream-user': 'alice', 'x-banstream-api-key': 'alice-key', 'x-forwarded-for': '198.51.100.7' },
    });
    await app.inject({ method: 'GET', url: '/v1/auth', remoteAddress: '10.0.0.5', headers: { 'x-user-id': 'mallory', 'x-api-key': 'stolen' } });
    expect(asked[0]).toMatchObject({ ip: '198.51.100.7', userId: 'alice', apiKey: 'alice-key' });
    expect([asked[1]!.userId, asked[1]!.apiKey]).toEqual([undefined, undefined]);
  });

  it("reads the client address from the one configured header: X-Real-IP set by the proxy wins over a client's X-Forwarded-For", async () => {
    const realIp = await sidecar({ clientIp: 'x-real-ip' });
    await realIp.app.inject({ method: 'GET', url: '/v1/auth', remoteAddress: '127.0.0.1', headers: { 'x-real-ip': '198.51.100.7', 'x-forwarded-for': '6.6.6.6' } });
    expect(realIp.asked[0]!.ip).toBe('198.51.100.7');
    await app!.close();
    const forwardedFor = await sidecar();
    await forwardedFor.app.inject({ method: 'GET', url: '/v1/auth', remoteAddress: '127.0.0.1', headers: { 'x-real-ip': '6.6.6.6' } });
    expect(forwardedFor.asked[0]!.ip).toBe('127.0.0.1');
  });

  it('reads no identity when its header names are empty', async () => {
    const { app, asked } = await sidecar({ user: '', apiKey: '' });
    await app.inject({ method: 'GET', url: '/v1/auth', remoteAddress: '127.0.0.1', headers: CLIENT_CLAIMS });
    expect([asked[0]!.userId, asked[0]!.apiKey]).toEqual([undefined, undefined]);
  });
});

describe('POST /v1/check and GET /v1/bans: callers only', () => {
  const body = { ip: '203.0.113.7', method: 'GET', host: 'h', path: '/', userId: 'vip' };

  it('refuses a caller not in ENFORCER_CALLERS before reading its body, and answers one that is', async () => {
    const { app, asked } = await sidecar();
    const refused = await app.inject({ method: 'POST', url: '/v1/check', remoteAddress: '203.0.113.9', payload: body });
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'CALLER_NOT_TRUSTED']);
    expect(refused.json().detail).toContain('ENFORCER_CALLERS; 203.0.113.9 is not one of them');
    expect((await app.inject({ method: 'GET', url: '/v1/bans', remoteAddress: '203.0.113.9' })).statusCode).toBe(403);
    expect(asked).toHaveLength(0);
    // The edge's own statement of the user is believed: it is the edge.
    expect((await app.inject({ method: 'POST', url: '/v1/check', remoteAddress: '127.0.0.1', payload: body })).statusCode).toBe(200);
    expect(asked[0]).toMatchObject({ userId: 'vip' });
    expect((await app.inject({ method: 'GET', url: '/v1/bans', remoteAddress: '::1' })).statusCode).toBe(200);
  });
});
