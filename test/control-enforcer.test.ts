import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { TopicTail } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { decodeAudit, startControl, testTokens, type Control } from './support/control.js';

/** A ban placed through the control API reaches a running enforcer sidecar, and lifting it there lifts it at the edge. */
describe('control API → enforcer', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let control: Control;
  let enforcer: RunningProcess;
  let enforcerUrl = '';
  let audit: TopicTail<AuditRecord>;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    control = await startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries });
    const port = await freePort();
    enforcer = spawnService('enforcer', { ...broker.env, REDIS_URL: redisUrl, HTTP_PORT: String(port), LOG_LEVEL: 'warn' });
    enforcerUrl = `http://127.0.0.1:${port}`;
    await waitUntil(async () => (await fetch(`${enforcerUrl}/readyz`)).status === 200, `enforcer ready\n${enforcer.output()}`, 60_000, 50);
    audit = await new TopicTail(broker.kafka, broker.topics.name('audit'), decodeAudit).start();
  }, 120_000);

  afterAll(async () => {
    await control?.stop();
    if (enforcer) {
      enforcer.child.kill('SIGTERM');
      await exitWithin(enforcer, 15_000).catch(() => enforcer.child.kill('SIGKILL'));
    }
    await audit?.stop();
    await broker?.close();
  });

  const check = async (ip: string) => {
    const res = await fetch(`${enforcerUrl}/v1/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ip, method: 'GET', host: 'shop.example', path: '/' }),
    });
    return (await res.json()) as { allowed: boolean; status: number; source: string; policyId?: string; reason: string };
  };

  it('denies a manually banned network at the enforcer, and allows it again once the ban is lifted', async () => {
    expect((await check('203.0.113.77')).allowed).toBe(true);
    const added = await control.call('POST', '/v1/bans', { token: tokens.operator, body: { subject: '203.0.113.0/24', duration: '30m', reason: 'scraper network', status: 403 } });
    expect(added.status).toBe(201);
    const denied = await waitUntil(
      async () => {
        const d = await check('203.0.113.77');
        return d.allowed ? undefined : d;
      },
      'the manual ban to reach the enforcer',
      10_000,
      20,
    );
    expect(denied).toMatchObject({ status: 403, source: 'ban', policyId: 'manual' });
    expect(denied.reason).toContain('scraper network');
    expect((await check('198.51.100.1')).allowed).toBe(true);

    const lifted = await control.call('DELETE', `/v1/bans/${encodeURIComponent('cidr:203.0.113.0/24')}`, { token: tokens.operator });
    expect(lifted.status).toBe(200);
    await waitUntil(async () => (await check('203.0.113.77')).allowed, 'the lifted ban to reach the enforcer', 10_000, 20);
    await waitUntil(() => audit.records.length === 2, 'two audit records');
    expect(audit.records.map((r) => [r.value!.action, r.value!.target, r.value!.actor])).toEqual([
      ['ban.add', 'cidr:203.0.113.0/24', 'operator-user'],
      ['ban.lift', 'cidr:203.0.113.0/24', 'operator-user'],
    ]);
  });

  it('an allowlist entry added through the API wins over a ban at the enforcer', async () => {
    await control.call('POST', '/v1/bans', { token: tokens.operator, body: { subject: '192.0.2.0/24', duration: '30m', reason: 'noisy' } });
    await waitUntil(async () => !(await check('192.0.2.10')).allowed, 'the ban', 10_000, 20);
    await control.call('POST', '/v1/allowlist', { token: tokens.operator, body: { entry: '192.0.2.10', reason: 'our probe', ttl: '1h' } });
    const allowed = await waitUntil(
      async () => {
        const d = await check('192.0.2.10');
        return d.allowed ? d : undefined;
      },
      'the allowlist entry to win',
      10_000,
      20,
    );
    expect(allowed.source).toBe('allowlist');
    expect((await check('192.0.2.11')).allowed).toBe(false);
  });
});
