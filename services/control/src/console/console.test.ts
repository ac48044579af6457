import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, createLogger } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { tokenEntryLine } from '@banstream/api';
import { TokenBook } from '../auth/tokens.js';
import type { BacktestJobs } from '../backtest/jobs.js';
import type { FeedRefresher } from '../feeds/refresher.js';
import { DEFAULT_MIN_PREFIX } from '../guards/index.js';
import { adminApi } from '../http/admin-api.js';
import type { ChangeWriter } from '../state/change-writer.js';
import { ControlState } from '../state/control-state.js';
import type { PartitionScanner } from '../state/partition-scan.js';
import type { ConsoleAssets } from './assets.js';
import { createConsole } from './console.js';
import { CONSOLE_CSP } from './security-headers.js';

const OPERATOR = 'bst_alice-operator-token-for-console-tests';
const VIEWER = 'bst_bob-viewer-token-for-console-tests';
const ADMIN = 'bst_root-admin-token-for-console-tests';
const catalog = loadSchemaCatalog();
const logger = createLogger({ service: 'control-test', level: 'silent' });
const ASSETS: ConsoleAssets = {
  index: { body: Buffer.from('<!doctype html><title>t</title>'), type: 'text/html; charset=utf-8' },
  files: new Map([['console.js', { body: Buffer.from('export {}'), type: 'text/javascript; charset=utf-8' }]]),
};

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The admin API and the console on one server, as service.ts wires them, with a writer that records who wrote what. */
async function server(built = true, consoleRateLimit = 1000) {
  const assets = built ? ASSETS : undefined;
  const written: { key: string; actor: string }[] = [];
  const writer = {
    serial: <T>(work: () => Promise<T>) => work(),
    write: async (change: { key: string }, ctx: { actor: string }) => {
      written.push({ key: change.key, actor: ctx.actor });
    },
  } as unknown as ChangeWriter;
  const tokens = new TokenBook([tokenEntryLine('alice', 'operator', OPERATOR), tokenEntryLine('bob', 'viewer', VIEWER), tokenEntryLine('root', 'admin', ADMIN)].join(','));
  const state = new ControlState(10);
  const clock = () => Date.UTC(2025, 5, 1);
  const web = createConsole({
    tokens,
    state,
    assets,
    sessionTtlMs: 3_600_000,
    maxSessions: 10,
    maxStreams: 2,
    tickMs: 1_000,
    metricsUrls: [],
    rateLimit: consoleRateLimit,
    eventsEndOffset: async () => 0,
    clock,
    logger,
  });
  app = createHttpServer(logger);
  await app.register(adminApi, {
    tokens,
    state,
    writer,
    jobs: {} as BacktestJobs,
    scanner: {} as PartitionScanner,
    topics: { history: 'h', audit: 'a' },
    historyCodec: catalog.codec(SCHEMA_NAMES.banHistory),
    auditCodec: catalog.codec(SCHEMA_NAMES.auditRecord),
    bounds: { maxScanned: 1000, budgetMs: 1000 },
    logger,
    clock,
    rateLimit: 1000,
    guards: { minPrefix: DEFAULT_MIN_PREFIX, maxBan: { text: '30d', ms: 30 * 86_400_000 } },
    feeds: {} as FeedRefresher,
    feedFileDir: undefined,
    ready: () => true,
    sessions: web.sessionAuth,
  });
  web.register(app);
  await app.ready();
  const signIn = async (token: string, headers: Record<string, string> = {}) => {
    const res = await app!.inject({ method: 'POST', url: '/console/session', payload: { token }, headers });
    const cookie = String(res.headers['set-cookie'] ?? '');
    return { res, cookie: cookie.split(';')[0]!, setCookie: cookie, csrf: res.json().csrf as string };
  };
  return { app, written, signIn };
}

const ban = { subject: '203.0.113.9', duration: '10m', reason: 'test' };

describe('console session exchange', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie holding no token, Secure only over TLS', async () => {
    const { signIn } = await server();
    const plain = await signIn(OPERATOR);
    expect(plain.res.statusCode).toBe(200);
    expect(plain.res.json()).toMatchObject({ name: 'alice', role: 'operator', csrf: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(plain.setCookie).toMatch(/^banstream-session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=3600$/);
    expect(plain.setCookie).not.toContain(OPERATOR);
    expect(plain.res.headers['cache-control']).toBe('no-store');
    const tls = await signIn(OPERATOR, { 'x-forwarded-proto': 'https' });
    expect(tls.setCookie).toMatch(/; Secure$/);
    const bad = await signIn('bst_not-a-token');
    expect(bad.res.statusCode).toBe(401);
    expect(bad.setCookie).toBe('');
  });

  it('answers who is signed in, and 401 without a session', async () => {
    const { app, signIn } = await server();
    const { cookie, csrf } = await signIn(VIEWER);
    const me = await app.inject({ method: 'GET', url: '/console/session', headers: { cookie } });
    expect(me.json()).toMatchObject({ name: 'bob', role: 'viewer', csrf });
    expect((await app.inject({ method: 'GET', url: '/console/session' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/console/session', headers: { cookie: 'banstream-session=forged' } })).statusCode).toBe(401);
  });
});

describe('the console rate limit', () => {
  it('keeps a signed-in user served when another client at the same address (a proxy, a NAT) spends the address limit', async () => {
    const { app, signIn } = await server(true, 20);
    const { cookie } = await signIn(OPERATOR);
    // Anyone (no token needed) tries sign-ins until the address is limited.
    const tries = [];
    for (let i = 0; i < 25; i++) tries.push((await app.inject({ method: 'POST', url: '/console/session', payload: { token: `bst_guess-${i}` } })).statusCode);
    expect(tries.slice(-1)).toEqual([429]);
    expect((await app.inject({ method: 'GET', url: '/console/session', headers: { cookie } })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/console/', headers: { cookie } })).statusCode).toBe(200);
  });
});

describe('the API with a console session', () => {
  it("maps the session to its token's role: a viewer reads and cannot write, even with the CSRF token", async () => {
    const { app, signIn, written } = await server();
    const { cookie, csrf } = await signIn(VIEWER);
    expect((await app.inject({ method: 'GET', url: '/v1/bans', headers: { cookie } })).statusCode).toBe(200);
    const write = await app.inject({ method: 'POST', url: '/v1/bans', headers: { cookie, 'x-csrf-token': csrf }, payload: ban });
    expect(write.statusCode).toBe(403);
    expect(write.json().code).toBe('FORBIDDEN');
    expect(written).toEqual([]);
  });

  it("refuses a write without the session's CSRF token, and audits an accepted one under the token's name", async () => {
    const { app, signIn, written } = await server();
    const { cookie, csrf } = await signIn(OPERATOR);
    const other = await signIn(OPERATOR);
    for (const headers of [{ cookie }, { cookie, 'x-csrf-token': 'wrong' }, { cookie, 'x-csrf-token': other.csrf }]) {
      const res = await app.inject({ method: 'POST', url: '/v1/bans', headers, payload: ban });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('CSRF_INVALID');
    }
    const del = await app.inject({ method: 'DELETE', url: '/v1/bans/203.0.113.9', headers: { cookie } });
    expect(del.json().code).toBe('CSRF_INVALID');
    expect(written).toEqual([]);
    const ok = await app.inject({ method: 'POST', url: '/v1/bans', headers: { cookie, 'x-csrf-token': csrf }, payload: ban });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().createdBy).toBe('alice');
    expect(written).toEqual([{ key: 'ip:203.0.113.9', actor: 'alice' }]);
  });

  it('leaves bearer tokens as they were, and a bad Authorization header is not rescued by a cookie', async () => {
    const { app, signIn } = await server();
    const { cookie } = await signIn(ADMIN);
    const bearer = await app.inject({ method: 'POST', url: '/v1/bans', headers: { authorization: `Bearer ${OPERATOR}` }, payload: ban });
    expect(bearer.statusCode).toBe(201);
    const mixed = await app.inject({ method: 'GET', url: '/v1/bans', headers: { cookie, authorization: 'Bearer bst_bogus' } });
    expect(mixed.statusCode).toBe(401);
  });

  it('signs out: needs the CSRF token, then the cookie opens nothing', async () => {
    const { app, signIn } = await server();
    const { cookie, csrf } = await signIn(OPERATOR);
    expect((await app.inject({ method: 'DELETE', url: '/console/session', headers: { cookie } })).json().code).toBe('CSRF_INVALID');
    const out = await app.inject({ method: 'DELETE', url: '/console/session', headers: { cookie, 'x-csrf-token': csrf } });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^banstream-session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0/);
    expect((await app.inject({ method: 'GET', url: '/v1/bans', headers: { cookie } })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/console/session', headers: { cookie } })).statusCode).toBe(401);
  });
});

describe('console answers', () => {
  it('carry the strict CSP on every answer, errors included', async () => {
    const { app } = await server();
    const answers = await Promise.all([
      app.inject({ method: 'GET', url: '/console/' }),
      app.inject({ method: 'GET', url: '/console/assets/console.js' }),
      app.inject({ method: 'GET', url: '/console/assets/..%2Fpackage.json' }),
      app.inject({ method: 'GET', url: '/console/session' }),
      app.inject({ method: 'POST', url: '/console/session', payload: { token: 'x' } }),
      app.inject({ method: 'GET', url: '/console/events' }),
      app.inject({ method: 'GET', url: '/console' }),
    ]);
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 404, 401, 401, 401, 302]);
    for (const a of answers) {
      expect(a.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(a.headers['x-frame-options']).toBe('DENY');
      expect(a.headers['x-content-type-options']).toBe('nosniff');
    }
    expect(CONSOLE_CSP).toBe("default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'");
    expect(answers[0]!.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('say how to build the console when it is not built', async () => {
    const { app } = await server(false);
    const page = await app.inject({ method: 'GET', url: '/console/' });
    expect(page.statusCode).toBe(503);
    expect(page.json().code).toBe('CONSOLE_NOT_BUILT');
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
  });
});

describe('POST /v1/policies/check', () => {
  it("validates a policy file with the CLI's parser, naming the field, and plans a valid one", async () => {
    const { app } = await server();
    const headers = { authorization: `Bearer ${VIEWER}` };
    const bad = await app.inject({
      method: 'POST',
      url: '/v1/policies/check',
      headers,
      payload: { text: 'id: p1\nkey: [ip]\nthreshold:\n  count: 0\n  interval: 1m\naction:\n  type: ban\n  banDuration: 10m\n' },
    });
    expect(bad.statusCode).toBe(200);
    expect(bad.json()).toEqual({ ok: false, errors: [expect.objectContaining({ path: 'threshold.count', message: 'must be > 0', line: 4 })] });
    const yamlError = await app.inject({ method: 'POST', url: '/v1/policies/check', headers, payload: { text: 'id: [' } });
    expect(yamlError.json().ok).toBe(false);
    expect(yamlError.json().errors[0].path).toMatch(/^line 1, column \d+$/);
    const good = await app.inject({
      method: 'POST',
      url: '/v1/policies/check',
      headers,
      payload: { text: 'id: p1\nkey: [ip]\nthreshold:\n  count: 10\n  interval: 1m\naction:\n  type: ban\n  banDuration: 10m\n' },
    });
    expect(good.json()).toMatchObject({ ok: true, policies: [{ id: 'p1' }], plan: [{ id: 'p1', action: 'create' }] });
  });
});
