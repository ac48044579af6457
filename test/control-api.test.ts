import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_NAMES, type AuditRecord, type Ban, type PolicyRecord } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { produceOrFail } from './support/kafka.js';
import { catalog, decodeBan, TopicTail } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { decodeAudit, startControl, testTokens, type Control, type Role } from './support/control.js';

/** The control API as a process against the real broker: every endpoint, the role matrix, audit, rate limit, secrecy of tokens. */
describe('control API', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let control: Control;
  let audit: TopicTail<AuditRecord>;
  let policies: TopicTail<PolicyRecord>;
  let bans: TopicTail<Ban>;
  /** Every change the tests make, to find its audit record at the end. */
  const changes: { action: string; target: string; actor: string }[] = [];

  const env = () => ({ ...broker.env, CONTROL_TOKENS: tokens.entries, CONTROL_RATE_LIMIT: '100000', CONTROL_BAN_SWEEP_MS: '200' });
  const as = (role: Role) => ({ token: tokens[role] });
  const policy = (id: string, over: Record<string, unknown> = {}) => ({ id, key: ['ip'], threshold: { count: 20, interval: '1m' }, action: { type: 'ban', banDuration: '10m' }, ...over });

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    control = await startControl(env());
    const { kafka, topics } = broker;
    audit = await new TopicTail(kafka, topics.name('audit'), decodeAudit).start();
    policies = await new TopicTail(kafka, topics.name('policies'), (b) => catalog.codec(SCHEMA_NAMES.policy).decode(b)).start();
    bans = await new TopicTail(kafka, topics.name('bans'), decodeBan).start();
  }, 90_000);

  afterAll(async () => {
    await control?.stop();
    await Promise.all([audit?.stop(), policies?.stop(), bans?.stop()]);
    await broker?.close();
  });

  describe('policies', () => {
    it('creates a policy as a preview, versioned with its author, on the policies topic', async () => {
      const created = await control.call('POST', '/v1/policies', { ...as('admin'), body: policy('login-rate') });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ id: 'login-rate', version: 1, mode: 'preview', enabled: true, updatedBy: 'admin-user' });
      changes.push({ action: 'policy.create', target: 'login-rate', actor: 'admin-user' });
      const record = await waitUntil(() => policies.latest().get('login-rate'), 'the policy record');
      expect(record).toMatchObject({ version: 1, mode: 'preview', updatedBy: 'admin-user' });
      expect(JSON.parse(record.definition)).toMatchObject({ key: ['ip'], threshold: { count: 20, interval: '1m' } });
      expect((await control.call('POST', '/v1/policies', { ...as('admin'), body: policy('login-rate') })).status).toBe(409);
    });

    it('replaces a policy with a new version, leaves an equal one alone, and keeps the versions', async () => {
      const updated = await control.call('PUT', '/v1/policies/login-rate', { ...as('admin'), body: { ...policy('login-rate'), mode: 'enforce', threshold: { count: 30, interval: '1m' } } });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ version: 2, mode: 'enforce' });
      changes.push({ action: 'policy.update', target: 'login-rate', actor: 'admin-user' });
      const same = await control.call('PUT', '/v1/policies/login-rate', { ...as('admin'), body: { ...policy('login-rate'), mode: 'enforce', threshold: { count: 30, interval: '1m' } } });
      expect(same.body.version).toBe(2);
      const got = await control.call('GET', '/v1/policies/login-rate', as('viewer'));
      expect(got.body).toMatchObject({ version: 2, spec: { threshold: { count: 30 } } });
      const versions = await control.call('GET', '/v1/policies/login-rate/versions', as('viewer'));
      expect(versions.body.versions.map((v: PolicyRecord) => [v.version, v.mode, v.updatedBy])).toEqual([
        [1, 'preview', 'admin-user'],
        [2, 'enforce', 'admin-user'],
      ]);
      const list = await control.call('GET', '/v1/policies', as('viewer'));
      expect(list.body.policies.map((p: PolicyRecord) => p.id)).toEqual(['login-rate']);
    });

    it('answers 400 with the path of every invalid field', async () => {
      const bad = await control.call('PUT', '/v1/policies/broken', { ...as('admin'), body: { key: [], threshold: { count: 0, interval: '1 minute' }, action: { type: 'ban' }, colour: 'red' } });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toContain('application/problem+json');
      expect(bad.body.code).toBe('POLICY_INVALID');
      expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(['key', 'threshold.count', 'threshold.interval', 'action.banDuration', 'colour']));
      expect(bad.body.errors).toContainEqual({ path: 'threshold.count', message: 'must be > 0' });
      const set = await control.call('POST', '/v1/policies/apply', { ...as('admin'), body: { policies: [policy('ok-one'), policy('bad-one', { threshold: { count: -1, interval: '1m' } })] } });
      expect(set.status).toBe(400);
      expect(set.body.errors).toContainEqual({ path: 'policies[1].threshold.count', message: 'must be > 0' });
      const mismatch = await control.call('PUT', '/v1/policies/one', { ...as('admin'), body: policy('two') });
      expect(mismatch.body.errors).toEqual([{ path: 'id', message: 'differs from the id in the path' }]);
      expect((await control.call('GET', '/v1/policies/ok-one', as('admin'))).status).toBe(404);
    });

    it('plans a set without writing, then applies it', async () => {
      const set = { policies: [policy('login-rate', { mode: 'enforce', threshold: { count: 40, interval: '1m' } }), policy('api-rate', { action: { type: 'throttle' } })] };
      const plan = await control.call('POST', '/v1/policies/plan', { ...as('viewer'), body: set });
      expect(plan.status).toBe(200);
      expect(plan.body).toMatchObject({
        applied: false,
        changes: [
          { id: 'api-rate', action: 'create' },
          { id: 'login-rate', action: 'update', version: 2, fields: [{ path: 'threshold.count', before: 30, after: 40 }] },
        ],
      });
      expect((await control.call('GET', '/v1/policies/login-rate', as('viewer'))).body.version).toBe(2);
      const applied = await control.call('POST', '/v1/policies/apply', { ...as('admin'), body: set });
      expect(applied.body.applied).toBe(true);
      changes.push({ action: 'policy.create', target: 'api-rate', actor: 'admin-user' }, { action: 'policy.update', target: 'login-rate', actor: 'admin-user' });
      expect((await control.call('GET', '/v1/policies/login-rate', as('viewer'))).body.version).toBe(3);
      expect((await control.call('GET', '/v1/policies/api-rate', as('viewer'))).body).toMatchObject({ version: 1, mode: 'preview' });
    });

    it('deletes a policy with a tombstone', async () => {
      const deleted = await control.call('DELETE', '/v1/policies/api-rate', as('admin'));
      expect(deleted.body).toEqual({ deleted: 'api-rate', version: 1 });
      changes.push({ action: 'policy.delete', target: 'api-rate', actor: 'admin-user' });
      await waitUntil(() => policies.records.some((r) => r.key === 'api-rate' && r.value === null), 'the policy tombstone');
      expect((await control.call('GET', '/v1/policies/api-rate', as('viewer'))).status).toBe(404);
      expect((await control.call('DELETE', '/v1/policies/api-rate', as('admin'))).status).toBe(404);
    });
  });

  describe('bans', () => {
    it('places manual bans, searches them by scope, subject, policy and origin, and lifts one with a tombstone', async () => {
      const added = await control.call('POST', '/v1/bans', { ...as('operator'), body: { subject: '203.0.113.7', duration: '1h', reason: 'credential stuffing', status: 429 } });
      expect(added.status).toBe(201);
      expect(added.body).toMatchObject({ subject: 'ip:203.0.113.7', policyId: 'manual', origin: 'manual', createdBy: 'operator-user', httpStatus: 429, reason: 'credential stuffing' });
      expect(added.body.expiresAt - added.body.startedAt).toBe(3_600_000);
      await control.call('POST', '/v1/bans', { ...as('operator'), body: { subject: '198.51.100.0/24', duration: '2h', reason: 'scanner network' } });
      await control.call('POST', '/v1/bans', { ...as('admin'), body: { subject: 'user:42', duration: '1d', reason: 'abuse' } });
      changes.push(
        { action: 'ban.add', target: 'ip:203.0.113.7', actor: 'operator-user' },
        { action: 'ban.add', target: 'cidr:198.51.100.0/24', actor: 'operator-user' },
        { action: 'ban.add', target: 'user:42', actor: 'admin-user' },
      );
      // One the aggregator decided, straight on the topic: the API reads what the topic says.
      const policyBan: Ban = {
        banId: 'agg-1',
        subject: 'ip:192.0.2.9',
        policyId: 'login-rate',
        reason: '25 requests in 1m',
        evidenceCount: 25,
        windowSeconds: 60,
        startedAt: Date.now(),
        expiresAt: Date.now() + 600_000,
        preview: false,
        escalationLevel: 0,
        origin: 'aggregator',
        httpStatus: 403,
        createdBy: null,
      };
      await produceOrFail(broker.producer, broker.topics.name('bans'), [{ key: policyBan.subject, value: catalog.codec(SCHEMA_NAMES.ban).encode(policyBan) }]);
      const subjects = async (query: string) => (await control.call('GET', `/v1/bans${query}`, as('viewer'))).body.bans.map((b: Ban) => b.subject);
      await waitUntil(async () => (await subjects('')).length === 4, 'four bans');
      expect(await subjects('?scope=ip')).toEqual(['ip:192.0.2.9', 'ip:203.0.113.7']);
      expect(await subjects('?origin=manual&subject=198.51')).toEqual(['cidr:198.51.100.0/24']);
      // The start of the subject or of its value, not any part of it.
      expect(await subjects('?subject=ip:192')).toEqual(['ip:192.0.2.9']);
      expect(await subjects('?subject=113.7')).toEqual([]);
      expect(await subjects('?policy=login-rate')).toEqual(['ip:192.0.2.9']);
      const page = await control.call('GET', '/v1/bans?limit=2', as('viewer'));
      expect(page.body).toMatchObject({ total: 4, next: 'ip:192.0.2.9' });
      expect((await control.call('GET', '/v1/bans/203.0.113.7', as('viewer'))).body.subject).toBe('ip:203.0.113.7');

      const lifted = await control.call('DELETE', `/v1/bans/${encodeURIComponent('user:42')}`, as('operator'));
      expect(lifted.body.lifted).toBe('user:42');
      changes.push({ action: 'ban.lift', target: 'user:42', actor: 'operator-user' });
      await waitUntil(() => bans.records.some((r) => r.key === 'user:42' && r.value === null), 'the unban tombstone');
      expect((await control.call('DELETE', '/v1/bans/user:42', as('operator'))).status).toBe(404);
    });

    it('refuses a bad subject or duration with the field named', async () => {
      const bad = await control.call('POST', '/v1/bans', { ...as('operator'), body: { subject: '203.0.113.7', duration: '1 hour', reason: 'x', extra: true } });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['duration', 'extra']);
      const subject = await control.call('POST', '/v1/bans', { ...as('operator'), body: { subject: 'planet:mars', duration: '1h', reason: 'x' } });
      expect(subject.status).toBe(400);
      expect(subject.body.code).toBe('SUBJECT_INVALID');
    });

    it('lifts a manual ban at its expiry, as the system actor', async () => {
      await control.call('POST', '/v1/bans', { ...as('operator'), body: { subject: '192.0.2.200', duration: '1s', reason: 'short' } });
      changes.push({ action: 'ban.add', target: 'ip:192.0.2.200', actor: 'operator-user' }, { action: 'ban.lift', target: 'ip:192.0.2.200', actor: 'banstream-control' });
      await waitUntil(() => bans.records.some((r) => r.key === 'ip:192.0.2.200' && r.value === null), 'the expiry tombstone', 10_000);
    });
  });

  describe('allowlist and alerts', () => {
    it('adds entries with a reason and an expiry, lists and removes them', async () => {
      const added = await control.call('POST', '/v1/allowlist', { ...as('operator'), body: { entry: '10.0.0.0/8', reason: 'internal network', ttl: '7d' } });
      expect(added.status).toBe(201);
      expect(added.body).toMatchObject({ entry: 'cidr:10.0.0.0/8', reason: 'internal network', addedBy: 'operator-user', expired: false });
      expect(added.body.expiresAt - added.body.addedAt).toBe(7 * 86_400_000);
      await control.call('POST', '/v1/allowlist', { ...as('operator'), body: { entry: 'user:probe', reason: 'monitoring' } });
      changes.push({ action: 'allowlist.add', target: 'cidr:10.0.0.0/8', actor: 'operator-user' }, { action: 'allowlist.add', target: 'user:probe', actor: 'operator-user' });
      const list = await control.call('GET', '/v1/allowlist', as('viewer'));
      expect(list.body.entries.map((e: { entry: string; expiresAt: number | null }) => [e.entry, e.expiresAt === null])).toEqual([
        ['cidr:10.0.0.0/8', false],
        ['user:probe', true],
      ]);
      expect((await control.call('DELETE', '/v1/allowlist/user:probe', as('operator'))).body).toEqual({ removed: 'user:probe' });
      changes.push({ action: 'allowlist.remove', target: 'user:probe', actor: 'operator-user' });
      expect((await control.call('DELETE', '/v1/allowlist/user:probe', as('operator'))).status).toBe(404);
      const past = await control.call('POST', '/v1/allowlist', { ...as('operator'), body: { entry: '192.0.2.1', reason: 'x', expiresAt: '2001-01-01T00:00:00Z' } });
      expect(past.body.errors).toEqual([{ path: 'expiresAt', message: 'is in the past' }]);
      const bad = await control.call('POST', '/v1/allowlist', { ...as('operator'), body: { entry: 'country:FR', reason: 'x' } });
      expect(bad.body.code).toBe('SUBJECT_INVALID');
    });

    it('shows recent alerts from the alerts topic, newest first, filtered by time and state', async () => {
      const alert = (code: string, state: 'fired' | 'resolved', at: number) => ({
        key: code,
        value: catalog
          .codec(SCHEMA_NAMES.geoAlert)
          .encode({ alertId: `a-${code}`, scope: 'country', code, state, currentRate: 900, baselineRate: 100, zScore: 12, ratio: 9, hourOfWeek: 10, timeZone: 'UTC', localHourOfWeek: 10, at }),
      });
      const now = Date.now();
      await produceOrFail(broker.producer, broker.topics.name('alerts'), [alert('FR', 'fired', now - 2000), alert('DE', 'fired', now - 1000), alert('FR', 'resolved', now)]);
      const all = await waitUntil(async () => {
        const r = await control.call('GET', '/v1/alerts', as('viewer'));
        return r.body.alerts.length === 3 ? r.body.alerts : undefined;
      }, 'three alerts');
      expect(all.map((a: { code: string; state: string }) => `${a.code} ${a.state}`)).toEqual(['FR resolved', 'DE fired', 'FR fired']);
      expect((await control.call('GET', `/v1/alerts?state=fired&since=${now - 1500}`, as('viewer'))).body.alerts.map((a: { code: string }) => a.code)).toEqual(['DE']);
    });
  });

  describe('authentication and roles', () => {
    const invalidPolicy = { key: ['ip'] };
    const routes: { method: string; path: string; need: Role; body?: unknown }[] = [
      { method: 'GET', path: '/v1/policies', need: 'viewer' },
      { method: 'GET', path: '/v1/policies/nothing-here', need: 'viewer' },
      { method: 'GET', path: '/v1/policies/nothing-here/versions', need: 'viewer' },
      { method: 'POST', path: '/v1/policies/plan', need: 'viewer', body: { policies: [] } },
      { method: 'POST', path: '/v1/policies', need: 'admin', body: invalidPolicy },
      { method: 'PUT', path: '/v1/policies/nothing-here', need: 'admin', body: invalidPolicy },
      { method: 'DELETE', path: '/v1/policies/nothing-here', need: 'admin' },
      { method: 'POST', path: '/v1/policies/apply', need: 'admin', body: { policies: [invalidPolicy] } },
      { method: 'GET', path: '/v1/bans', need: 'viewer' },
      { method: 'GET', path: '/v1/bans/ip:192.0.2.250', need: 'viewer' },
      { method: 'POST', path: '/v1/bans', need: 'operator', body: { subject: '192.0.2.250' } },
      { method: 'DELETE', path: '/v1/bans/ip:192.0.2.250', need: 'operator' },
      { method: 'GET', path: '/v1/allowlist', need: 'viewer' },
      { method: 'POST', path: '/v1/allowlist', need: 'operator', body: { entry: '192.0.2.250' } },
      { method: 'DELETE', path: '/v1/allowlist/192.0.2.250', need: 'operator' },
      { method: 'GET', path: '/v1/alerts', need: 'viewer' },
      { method: 'GET', path: '/v1/backtests', need: 'viewer' },
      { method: 'GET', path: '/v1/backtests/00000000-0000-4000-8000-000000000000', need: 'viewer' },
      { method: 'POST', path: '/v1/backtests', need: 'operator', body: { from: '1h' } },
    ];
    const rank: Role[] = ['viewer', 'operator', 'admin'];

    it('allows each role exactly what it should, and names the role needed when it does not', async () => {
      const matrix: string[] = [];
      for (const route of routes) {
        for (const role of rank) {
          const res = await control.call(route.method, route.path, { ...as(role), body: route.body });
          const allowed = rank.indexOf(role) >= rank.indexOf(route.need);
          // Allowed requests are made harmless (unknown ids, incomplete bodies): they pass the guard and fail later, or read.
          if (allowed && (res.status === 401 || res.status === 403 || res.status >= 500)) matrix.push(`${role} ${route.method} ${route.path}: ${res.status} ${JSON.stringify(res.body)}`);
          if (!allowed) {
            if (res.status !== 403) matrix.push(`${role} ${route.method} ${route.path}: expected 403, got ${res.status}`);
            else expect(res.body.detail).toMatch(new RegExp(`^${role}-user has the role ${role}; ${route.method} /v1/\\S+ needs ${route.need} \\(`));
          }
        }
      }
      expect(matrix).toEqual([]);
    });

    it('answers 401 without a token, with a malformed header or an unknown token', async () => {
      for (const route of routes) {
        const none = await control.call(route.method, route.path, { body: route.body });
        expect(none.status, `${route.method} ${route.path}`).toBe(401);
        expect(none.body.detail).toContain('missing bearer token');
      }
      expect((await control.call('GET', '/v1/bans', { token: 'bst_not-a-real-token' })).body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED', detail: 'unknown or revoked token' });
      const basic = await fetch(`${control.url}/v1/bans`, { headers: { authorization: 'Basic YWxpY2U6c2VjcmV0' } });
      expect(basic.status).toBe(401);
      expect(((await basic.json()) as { detail: string }).detail).toContain('expected "Bearer <token>"');
    });

    it('limits each client to CONTROL_RATE_LIMIT requests a minute', async () => {
      const limited = await startControl({ ...env(), CONTROL_RATE_LIMIT: '3' });
      try {
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push((await limited.call('GET', '/v1/policies', as('viewer'))).status);
        expect(statuses).toEqual([200, 200, 200, 429]);
        const refused = await limited.call('GET', '/v1/policies', as('viewer'));
        expect(refused.body).toMatchObject({ code: 'RATE_LIMITED' });
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        expect((await limited.call('GET', '/v1/policies', as('admin'))).status).toBe(200);
      } finally {
        await limited.stop();
      }
    }, 180_000);

    it('serves its OpenAPI document without a token', async () => {
      const doc = (await (await fetch(`${control.url}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
      expect(doc.openapi).toBe('3.1.0');
      expect(Object.keys(doc.paths)).toEqual(
        expect.arrayContaining([
          '/v1/policies',
          '/v1/policies/{id}',
          '/v1/policies/{id}/versions',
          '/v1/policies/plan',
          '/v1/policies/apply',
          '/v1/bans',
          '/v1/bans/{subject}',
          '/v1/allowlist',
          '/v1/allowlist/{entry}',
          '/v1/alerts',
          '/v1/backtests',
          '/v1/backtests/{id}',
        ]),
      );
    });
  });

  describe('source of truth and audit', () => {
    it('a new instance rebuilds policies, bans and allowlist from the topics alone', async () => {
      const fresh = await startControl(env());
      try {
        const [p, b, a] = await Promise.all(['/v1/policies', '/v1/bans', '/v1/allowlist'].map((path) => fresh.call('GET', path, as('viewer'))));
        expect(p!.body.policies.map((x: PolicyRecord) => `${x.id} v${x.version}`)).toEqual(['login-rate v3']);
        expect(b!.body.bans.map((x: Ban) => x.subject)).toEqual(['cidr:198.51.100.0/24', 'ip:192.0.2.9', 'ip:203.0.113.7']);
        expect(a!.body.entries.map((x: { entry: string }) => x.entry)).toEqual(['cidr:10.0.0.0/8']);
      } finally {
        await fresh.stop();
      }
    }, 180_000);

    it('wrote an audit record for every change, with actor, target, before and after', async () => {
      const key = (c: { action: string; target: string; actor: string }) => `${c.actor} ${c.action} ${c.target}`;
      await waitUntil(() => audit.records.length >= changes.length, `${changes.length} audit records`);
      const records = audit.records.map((r) => r.value!);
      expect(records.map(key).sort()).toEqual(changes.map(key).sort());
      for (const r of audit.records) expect(r.key).toBe(r.value!.actor);
      const update = records.find((r) => r.action === 'policy.update')!;
      expect(JSON.parse(update.before!)).toMatchObject({ id: 'login-rate', version: 1 });
      expect(JSON.parse(update.after!)).toMatchObject({ id: 'login-rate', version: 2 });
      expect(update.requestId).toMatch(/.+/);
      const lift = records.find((r) => r.action === 'ban.lift' && r.target === 'user:42')!;
      expect(lift.after).toBeNull();
    });

    it('counts changes and refusals in its metrics', async () => {
      const metrics = await (await fetch(`${control.url}/metrics`)).text();
      expect(metrics).toMatch(/banstream_control_changes_total\{action="policy\.create",service="control"\} 2/);
      expect(metrics).toMatch(/banstream_control_requests_denied_total\{status="403",service="control"\} \d+/);
      expect(metrics).toMatch(/banstream_control_requests_denied_total\{status="401",service="control"\} \d+/);
    });

    it('never writes a token to its log', async () => {
      const output = control.proc.output();
      expect(output).toContain('"msg":"topics read; API open"');
      for (const t of [tokens.viewer, tokens.operator, tokens.admin, 'bst_not-a-real-token', 'YWxpY2U6c2VjcmV0']) expect(output).not.toContain(t);
    });
  });
});
