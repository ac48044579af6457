import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { BanstreamError } from '@banstream/core';
import { createHttpServer, createLogger } from '@banstream/platform';
import type { Decision, Enforcer } from '../enforcer.js';
import { sidecarRoutes } from './sidecar-routes.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The routes on a real Fastify server, an enforcer stand-in answering `decision` (or throwing it). */
async function sidecar(decision: Decision | Error): Promise<FastifyInstance> {
  app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
  const enforcer = { check: async () => {
    if (decision instanceof Error) throw decision;
    return decision;
  } } as unknown as Enforcer;
  await app.register(sidecarRoutes, { enforcer, trustedProxies: [] });
  return app;
}

const check = (a: FastifyInstance) => a.inject({ method: 'POST', url: '/v1/check', payload: { ip: '203.0.113.7', method: 'GET', host: 'shop.example', path: '/login' } });

describe('POST /v1/check', () => {
  it('answers every field of a decision, through the compiled response serializer', async () => {
    const denied: Decision = {
      allowed: false, status: 429, source: 'throttle', policyId: 'login-throttle', reason: 'over 20 per 1m', retryAfterSeconds: 7.5, limit: 20, remaining: 0,
      previewDenies: [{ source: 'ban', policyId: 'preview-ban', deny: true, status: 403, preview: true, reason: 'would ban' }],
      quota: { policyId: 'login-throttle', limit: 20, remaining: 0, windowSeconds: 60 },
    };
    const res = await check(await sidecar(denied));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      allowed: false, status: 429, source: 'throttle', reason: 'over 20 per 1m', policyId: 'login-throttle', retryAfterSeconds: 7.5, limit: 20, remaining: 0,
      previewDenies: [{ policyId: 'preview-ban', source: 'ban', reason: 'would ban' }],
    });
    expect(res.headers['ratelimit-policy']).toBe('"login-throttle";q=20;w=60');
  });

  it('takes limit and remaining from the quota when the verdict has none, and leaves out what is not there', async () => {
    const allowed: Decision = { allowed: true, status: 200, source: 'none', reason: 'no policy denies this request', previewDenies: [], quota: { policyId: 'api', limit: 100, remaining: 99, windowSeconds: 60 } };
    expect((await check(await sidecar(allowed))).json()).toEqual({ allowed: true, status: 200, source: 'none', reason: 'no policy denies this request', limit: 100, remaining: 99 });
  });

  it('answers 400 naming an address it cannot read, as problem+json', async () => {
    const res = await check(await sidecar(new BanstreamError('SUBJECT_INVALID_IP', 'not an IP address: "x"')));
    expect([res.statusCode, res.headers['content-type'], res.json().detail]).toEqual([400, 'application/problem+json; charset=utf-8', 'not an IP address: "x"']);
  });

  it('answers 500 when the enforcer itself fails: not the caller\'s error', async () => {
    expect((await check(await sidecar(new Error('cache corrupted')))).statusCode).toBe(500);
  });
});
