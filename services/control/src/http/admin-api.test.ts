import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, createLogger } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES, type AllowEntry, type AuditRecord, type Ban } from '@banstream/schemas';
import { tokenEntryLine } from '@banstream/api';
import { TokenBook } from '../auth/tokens.js';
import type { BacktestJobs } from '../backtest/jobs.js';
import { DEFAULT_MIN_PREFIX } from '../guards/index.js';
import type { ChangeWriter } from '../state/change-writer.js';
import type { FeedRefresher } from '../feeds/refresher.js';
import type { PartitionScanner } from '../state/partition-scan.js';
import { ControlState } from '../state/control-state.js';
import { adminApi } from './admin-api.js';

const ALICE = 'bst_alice-operator-token-for-tests';
const BOB = 'bst_bob-viewer-token-for-tests';
const ROOT = 'bst_root-admin-token-for-tests';
const catalog = loadSchemaCatalog();
const logger = createLogger({ service: 'control-test', level: 'silent' });

/** What the routes asked to write, with the audit fields the writer would record (the Kafka writer is tested elsewhere). */
interface Written {
  kind: string;
  key: string;
  value: Ban | AllowEntry | null;
  forced: AuditRecord['forced'];
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function api(rateLimit = 1000) {
  const written: Written[] = [];
  const writer = {
    serial: <T>(work: () => Promise<T>) => work(),
    write: async (change: Omit<Written, 'forced'>, ctx: { forced?: string | null }) => {
      written.push({ kind: change.kind, key: change.key, value: change.value, forced: ctx.forced ?? null });
    },
  } as unknown as ChangeWriter;
  app = createHttpServer(logger);
  await app.register(adminApi, {
    tokens: new TokenBook([tokenEntryLine('alice', 'operator', ALICE), tokenEntryLine('bob', 'viewer', BOB), tokenEntryLine('root', 'admin', ROOT)].join(',')),
    state: new ControlState(10),
    writer,
    jobs: {} as BacktestJobs,
    // History and audit queries read Kafka: test/control-history.test.ts runs them against the broker.
    scanner: {} as PartitionScanner,
    topics: { history: 'h', audit: 'a' },
    historyCodec: catalog.codec(SCHEMA_NAMES.banHistory),
    auditCodec: catalog.codec(SCHEMA_NAMES.auditRecord),
    bounds: { maxScanned: 1000, budgetMs: 1000 },
    logger,
    clock: () => Date.UTC(2025, 5, 1),
    rateLimit,
    guards: { minPrefix: DEFAULT_MIN_PREFIX, maxBan: { text: '30d', ms: 30 * 86_400_000 } },
    feeds: {} as FeedRefresher,
    feedFileDir: undefined,
    ready: () => true,
  });
  const call = (method: 'GET' | 'POST', url: string, options: { token?: string; body?: unknown; from?: string } = {}) =>
    app!.inject({
      method,
      url,
      remoteAddress: options.from ?? '192.0.2.10',
      headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` },
      ...(options.body === undefined ? {} : { payload: options.body as object }),
    });
  return { call, written };
}

describe('the control API answers', () => {
  it('are never cached and never sniffed, refusals included', async () => {
    const { call } = await api(1);
    const answers = [await call('GET', '/v1/bans', { token: BOB }), await call('GET', '/v1/bans'), await call('GET', '/v1/bans')];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 401, 429]);
    for (const a of answers) {
      expect(a.headers['cache-control']).toBe('no-store');
      expect(a.headers['x-content-type-options']).toBe('nosniff');
    }
  });
});

describe('the control API rate limiter', () => {
  it('counts bogus tokens against the address: rotating them does not reset the limit', async () => {
    const { call } = await api(3);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call('GET', '/v1/policies', { token: `bst_bogus-${i}` })).statusCode);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // No token at all is the same client.
    expect((await call('GET', '/v1/policies')).statusCode).toBe(429);
    // Another address has its own budget.
    expect((await call('GET', '/v1/policies', { token: 'bst_bogus-x', from: '198.51.100.1' })).statusCode).toBe(401);
  });

  it('keys an authenticated caller on its identity, wherever it calls from', async () => {
    const { call } = await api(3);
    const statuses = [];
    for (const from of ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4']) statuses.push((await call('GET', '/v1/policies', { token: BOB, from })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    // A flood of bad tokens from one address does not spend a valid caller's budget there.
    for (let i = 0; i < 4; i++) await call('GET', '/v1/policies', { token: `bst_bogus-${i}`, from: '203.0.113.9' });
    expect((await call('GET', '/v1/policies', { token: ALICE, from: '203.0.113.9' })).statusCode).toBe(200);
  });
});

describe('guard rails on manual bans and allowlist entries', () => {
  const ban = (subject: string, extra: Record<string, unknown> = {}) => ({ subject, duration: '1h', reason: 'test', ...extra });

  it.each(['0.0.0.0/0', '::/0', '::ffff:0:0/96', '10.0.0.0/7', '2001:db8::/31'])('refuses a ban on %s without force, naming the field and the limit', async (subject) => {
    const { call, written } = await api();
    const res = await call('POST', '/v1/bans', { token: ALICE, body: ban(subject) });
    expect([res.statusCode, res.headers['content-type']]).toEqual([400, 'application/problem+json; charset=utf-8']);
    const body = res.json();
    expect([body.type, body.title, body.status, body.code]).toEqual(['about:blank', 'Bad Request', 400, 'NETWORK_TOO_WIDE']);
    expect(body.errors).toEqual([{ path: 'subject', message: expect.stringMatching(/is wider than the \/(8|32) an IPv[46] ban may cover without force \(CONTROL_MIN_PREFIX_V[46]\)$/) }]);
    expect(body.detail).toContain('send force: true');
    expect(written).toEqual([]);
  });

  it('places it with force: true and hands the overridden guard to the audit', async () => {
    const { call, written } = await api();
    const res = await call('POST', '/v1/bans', { token: ALICE, body: ban('0.0.0.0/0', { force: true }) });
    expect(res.statusCode).toBe(201);
    expect(res.json().subject).toBe('cidr:0.0.0.0/0');
    expect(written).toEqual([expect.objectContaining({ kind: 'ban', key: 'cidr:0.0.0.0/0', forced: '0.0.0.0/0 is wider than the /8 an IPv4 ban may cover without force (CONTROL_MIN_PREFIX_V4)' })]);
    // A narrow one needs no force, and force on it overrides nothing.
    await call('POST', '/v1/bans', { token: ALICE, body: ban('203.0.113.0/24', { force: true }) });
    expect(written[1]).toMatchObject({ key: 'cidr:203.0.113.0/24', forced: null });
  });

  it('refuses a manual ban over the cap, with or without force, and one too long to count', async () => {
    const { call, written } = await api();
    for (const body of [ban('203.0.113.7', { duration: '31d' }), ban('203.0.113.7', { duration: '31d', force: true }), ban('203.0.113.7', { duration: '99999999999999999999d' })]) {
      const res = await call('POST', '/v1/bans', { token: ALICE, body });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'BAN_TOO_LONG',
        errors: [{ path: 'duration', message: expect.stringContaining('longer than the 30d a manual ban may last (CONTROL_MAX_BAN_DURATION)') }],
      });
    }
    expect((await call('POST', '/v1/bans', { token: ALICE, body: ban('203.0.113.7', { duration: '30d' }) })).statusCode).toBe(201);
    expect(written).toHaveLength(1);
  });

  it('holds allowlist entries to the same limits', async () => {
    const { call, written } = await api();
    for (const entry of ['0.0.0.0/0', '::/0', '::ffff:0.0.0.0/96']) {
      const res = await call('POST', '/v1/allowlist', { token: ALICE, body: { entry, reason: 'typo' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'NETWORK_TOO_WIDE', errors: [{ path: 'entry', message: expect.stringContaining('an IPv') }] });
    }
    expect(written).toEqual([]);
    const forced = await call('POST', '/v1/allowlist', { token: ALICE, body: { entry: '::/0', reason: 'lab', force: true, ttl: '1h' } });
    expect(forced.statusCode).toBe(201);
    expect(written).toEqual([expect.objectContaining({ key: 'cidr:::/0', forced: expect.stringContaining('(CONTROL_MIN_PREFIX_V6)') })]);
    const huge = await call('POST', '/v1/allowlist', { token: ALICE, body: { entry: '192.0.2.1', reason: 'x', ttl: '99999999999999999999d' } });
    expect(huge.json()).toMatchObject({ code: 'INVALID_REQUEST', errors: [{ path: 'ttl', message: 'is too long' }] });
  });
});

describe('policy sets', () => {
  it('refuses an allowlist (or any unknown field) in a policy set instead of dropping it in silence', async () => {
    const { call, written } = await api();
    for (const url of ['/v1/policies/plan', '/v1/policies/apply']) {
      const res = await call('POST', url, { token: ROOT, body: { policies: [], allowlist: [{ entry: '0.0.0.0/0' }], colour: 'red' } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().errors).toEqual([
        { path: 'allowlist', message: 'is not applied with policies: add entries with POST /v1/allowlist (banstream allow add)' },
        { path: 'colour', message: 'is not a known field' },
      ]);
    }
    expect((await call('POST', '/v1/policies/apply', { token: ROOT, body: { policies: [], prune: 'yes' } })).json().errors).toEqual([{ path: 'prune', message: 'must be true or false' }]);
    expect((await call('POST', '/v1/policies/apply', { token: ROOT, body: { policies: [] } })).statusCode).toBe(200);
    expect(written).toEqual([]);
  });
});
