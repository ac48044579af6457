import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { BanstreamError } from '@banstream/core';
import { createHttpServer, createLogger } from '@banstream/platform';
import type { Decision, Enforcer } from '../enforcer.js';
import { AnswerBatch } from './answer-batch.js';
import { sidecarRoutes } from './sidecar-routes.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The routes on a real Fastify server, an enforcer stand-in answering `decision` (or throwing it). */
async function sidecar(decision: Decision | Error): Promise<FastifyInstance> {
  app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
  const enforcer = {
    check: async () => {
      if (decision instanceof Error) throw decision;
      return decision;
    },
  } as unknown as Enforcer;
  await app.register(sidecarRoutes, { enforcer, trustedProxies: [] });
  return app;
}

const check = (a: FastifyInstance) => a.inject({ method: 'POST', url: '/v1/check', payload: { ip: '203.0.113.7', method: 'GET', host: 'shop.example', path: '/login' } });

describe('POST /v1/check', () => {
  it('answers every field of a decision, through the compiled response serializer', async () => {
    const denied: Decision = {
      allowed: false,
      status: 429,
      source: 'throttle',
      policyId: 'login-throttle',
      reason: 'over 20 per 1m',
      retryAfterSeconds: 7.5,
      limit: 20,
      remaining: 0,
      previewDenies: [{ source: 'ban', policyId: 'preview-ban', deny: true, status: 403, preview: true, reason: 'would ban' }],
      quota: { policyId: 'login-throttle', limit: 20, remaining: 0, windowSeconds: 60 },
    };
    const res = await check(await sidecar(denied));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      allowed: false,
      status: 429,
      source: 'throttle',
      reason: 'over 20 per 1m',
      policyId: 'login-throttle',
      retryAfterSeconds: 7.5,
      limit: 20,
      remaining: 0,
      previewDenies: [{ policyId: 'preview-ban', source: 'ban', reason: 'would ban' }],
    });
    expect(res.headers['ratelimit-policy']).toBe('"login-throttle";q=20;w=60');
  });

  it('takes limit and remaining from the quota when the verdict has none, and leaves out what is not there', async () => {
    const allowed: Decision = {
      allowed: true,
      status: 200,
      source: 'none',
      reason: 'no policy denies this request',
      previewDenies: [],
      quota: { policyId: 'api', limit: 100, remaining: 99, windowSeconds: 60 },
    };
    expect((await check(await sidecar(allowed))).json()).toEqual({ allowed: true, status: 200, source: 'none', reason: 'no policy denies this request', limit: 100, remaining: 99 });
  });

  it('answers 400 naming an address it cannot read, as problem+json', async () => {
    const res = await check(await sidecar(new BanstreamError('SUBJECT_INVALID_IP', 'not an IP address: "x"')));
    expect([res.statusCode, res.headers['content-type'], res.json().detail]).toEqual([400, 'application/problem+json; charset=utf-8', 'not an IP address: "x"']);
  });

  it('answers a body its schema refuses with problem+json naming the field', async () => {
    const a = await sidecar(new Error('not asked'));
    const res = await a.inject({ method: 'POST', url: '/v1/check', payload: { ip: '203.0.113.7', method: 'GET', host: 'h', path: '/', extra: 1 } });
    expect([res.statusCode, res.headers['content-type'], res.json()]).toEqual([
      400,
      'application/problem+json; charset=utf-8',
      {
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        code: 'INVALID_REQUEST',
        detail: 'extra: is not a known field',
        errors: [{ path: 'extra', message: 'is not a known field' }],
      },
    ]);
  });

  it('passes a cost on to the enforcer, and refuses one out of 1 to 1000000 or not whole, naming the field', async () => {
    app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
    const asked: unknown[] = [];
    const allowed: Decision = { allowed: true, status: 200, source: 'none', reason: 'ok', previewDenies: [] };
    const enforcer = { check: async (request: unknown) => (asked.push(request), allowed) } as unknown as Enforcer;
    await app.register(sidecarRoutes, { enforcer, trustedProxies: [] });
    const body = (cost: unknown) => ({ ip: '203.0.113.7', method: 'POST', host: 'h', path: '/search', cost });
    expect((await app.inject({ method: 'POST', url: '/v1/check', payload: body(25) })).statusCode).toBe(200);
    expect(asked).toEqual([expect.objectContaining({ cost: 25 })]);
    for (const cost of [0, -3, 1_000_001, 2.5]) {
      const res = await app.inject({ method: 'POST', url: '/v1/check', payload: body(cost) });
      expect([res.statusCode, res.json().code, res.json().errors?.[0]?.path], String(cost)).toEqual([400, 'INVALID_REQUEST', 'cost']);
    }
    expect(asked).toHaveLength(1);
  });

  it('answers 400 COST_OUT_OF_RANGE when the enforcer refuses a cost', async () => {
    const res = await check(await sidecar(new BanstreamError('COST_OUT_OF_RANGE', 'cost: 0 is out of range (1 to 1000000)')));
    expect([res.statusCode, res.json().code]).toEqual([400, 'COST_OUT_OF_RANGE']);
  });

  it("answers 500 when the enforcer itself fails: not the caller's error", async () => {
    const res = await check(await sidecar(new Error('cache corrupted')));
    expect([res.statusCode, res.headers['content-type'], res.json().code]).toEqual([500, 'application/problem+json; charset=utf-8', 'INTERNAL']);
    expect(res.body).not.toContain('cache corrupted');
  });
});

describe('answers batched per event-loop turn', () => {
  it('gives each of many concurrent requests its own decision, on /v1/check and /v1/auth', async () => {
    app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
    // Denies addresses ending in an odd number, and says whose decision it is.
    const enforcer = {
      check: async (r: { ip: string }) => {
        const odd = Number(r.ip.split('.')[3]) % 2 === 1;
        return { allowed: !odd, status: odd ? 403 : 200, source: odd ? 'ban' : 'none', reason: `for ${r.ip}`, previewDenies: [] } satisfies Decision;
      },
    } as unknown as Enforcer;
    let held = 0;
    const answers = new AnswerBatch();
    const turn = answers.turn.bind(answers);
    answers.turn = () => {
      const wait = turn();
      if (wait) held++;
      return wait;
    };
    await app.register(sidecarRoutes, { enforcer, trustedProxies: [], answers });
    const ips = Array.from({ length: 40 }, (_, i) => `198.51.100.${i}`);
    const checks = await Promise.all(ips.map((ip) => app!.inject({ method: 'POST', url: '/v1/check', payload: { ip, method: 'GET', host: 'h', path: '/' } })));
    expect(checks.map((r) => r.json().reason)).toEqual(ips.map((ip) => `for ${ip}`));
    expect(checks.map((r) => r.json().allowed)).toEqual(ips.map((_, i) => i % 2 === 0));
    const auths = await Promise.all(ips.map((ip) => app!.inject({ method: 'GET', url: '/v1/auth', remoteAddress: ip })));
    expect(auths.map((r) => r.statusCode)).toEqual(ips.map((_, i) => (i % 2 === 0 ? 204 : 403)));
    expect(auths.filter((r) => r.statusCode === 403).map((r) => r.json().detail)).toEqual(ips.filter((_, i) => i % 2 === 1).map((ip) => `for ${ip}`));
    // Most answers were decided in a turn that had already answered one: they were held.
    expect(held).toBeGreaterThan(40);
  });
});
