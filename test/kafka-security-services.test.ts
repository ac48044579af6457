import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTopics, topicFullName, topicSpecs, type Admin, type Kafka, type TopicName } from '@banstream/kafka';
import type { AuditRecord } from '@banstream/schemas';
import { captureLogger, testInfra, waitUntil } from './support/infra.js';
import { describeProcess, exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { startAggregator, TopicTail, type Aggregator } from './support/aggregator.js';
import { decodeAudit, startControl, testTokens, type Control } from './support/control.js';
import { GEO_DB, postedEvent, startGateway, type Gateway } from './support/ingest.js';
import { grantRoleAcls, grantTopicAcl, revokeTopicAcl, startSecureBroker, untilAcls, type SecureBroker } from './support/secure-broker.js';

/**
 * Issue 27, Deliver 1: every service as the process it is in production (the built
 * services/<name>/dist/main.js), each with its own principal on a SASL_SSL broker with
 * KRaft's ACL authorizer (support/secure-broker.ts), doing its job end to end: a policy
 * written through the control API, events posted to the gateway, counted by the
 * aggregator, and its ban at the enforcer. Then the aggregator's ACLs are taken back
 * while it runs: it stops with the refusal named and exit 77, instead of retrying for
 * ever or staying ready without its input.
 */
const PREFIX = 'banstream.';
const topic = (name: TopicName) => topicFullName(PREFIX, name);
const { logger } = captureLogger();
const FLOOD = 30;

describe('every service as a process, each with its own principal, over SASL_SSL', () => {
  const tokens = testTokens();
  let broker: SecureBroker;
  let admin: Admin;
  let control: Control;
  let gateway: Gateway;
  let aggregator: Aggregator;
  let enforcerUrl = '';
  let audit: TopicTail<AuditRecord>;
  const clients: Kafka[] = [];
  const processes: RunningProcess[] = [];
  /** What every service is given: its principal's variables, the layout, no topic creation (no CREATE for anyone but the operator). */
  const env = (user: string, extra: Record<string, string> = {}) => ({ ...broker.env(user), TOPIC_PREFIX: PREFIX, TOPIC_PARTITIONS: '2', TOPIC_AUTO_CREATE: 'false', ...extra });
  const aggregatorEnv = (extra: Record<string, string> = {}) => env('aggregator', { AGGREGATOR_TICK_MS: '50', AGGREGATOR_WORKERS: '1', SHUTDOWN_TIMEOUT_MS: '5000', LOG_LEVEL: 'warn', ...extra });
  const client = (user: string) => {
    const kafka = broker.client(user, logger);
    clients.push(kafka);
    return kafka;
  };
  let enforcer: RunningProcess;
  /** For a timeout message: what each service counted and said. */
  const state = async () => {
    const consumed = await aggregator.metric('banstream_aggregator_events_consumed_total').catch(() => Number.NaN);
    const delivered = await gateway.metric('banstream_edge_events_delivered_total').catch(() => Number.NaN);
    const bans = await aggregator.metric('banstream_aggregator_bans_emitted_total').catch(() => Number.NaN);
    return `gateway delivered ${delivered}, aggregator consumed ${consumed}, bans ${bans}\naggregator: ${describeProcess(aggregator.proc)}\nenforcer: ${describeProcess(enforcer)}\ngateway: ${describeProcess(gateway.proc)}`;
  };
  const check = async (ip: string) => {
    const res = await fetch(`${enforcerUrl}/v1/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ip, method: 'GET', host: 'shop.example', path: '/' }),
    });
    return (await res.json()) as { allowed: boolean; status: number; source: string; policyId?: string };
  };
  const flood = async (ip: string) => {
    const res = await gateway.post(JSON.stringify(Array.from({ length: FLOOD }, () => postedEvent(ip))), 'application/json');
    expect(res.status).toBe(202);
  };

  beforeAll(async () => {
    broker = await startSecureBroker(['ingest', 'enforcer', 'control', 'aggregator'], logger);
    admin = broker.client('admin', logger).admin();
    await admin.connect();
    await ensureTopics(admin, topicSpecs({ prefix: PREFIX, partitions: 2, replicationFactor: 1 }));
    await grantRoleAcls(admin, PREFIX);
    const probe = client('aggregator').admin();
    await probe.connect();
    await untilAcls(() => probe.fetchTopicOffsets(topic('counts')), 'allowed', 'the aggregator describing counts');
    await probe.disconnect();

    control = await startControl(env('control', { CONTROL_TOKENS: tokens.entries, LOG_LEVEL: 'warn' }));
    processes.push(control.proc);
    aggregator = await startAggregator(aggregatorEnv());
    processes.push(aggregator.proc);
    const port = await freePort();
    enforcer = spawnService('enforcer', env('enforcer', { REDIS_URL: testInfra().redisUrl, HTTP_PORT: String(port), LOG_LEVEL: 'warn' }));
    processes.push(enforcer);
    enforcerUrl = `http://127.0.0.1:${port}`;
    await waitUntil(
      async () => (await fetch(`${enforcerUrl}/readyz`).catch(() => undefined))?.status === 200,
      () => `enforcer ready: ${describeProcess(enforcer)}`,
      60_000,
      100,
    );
    gateway = await startGateway(env('ingest', { INGEST_ALLOW_ANONYMOUS_EDGES: 'true', INGEST_GEOIP_DB: GEO_DB }));
    processes.push(gateway.proc);
    audit = await new TopicTail(broker.client('admin', logger), topic('audit'), decodeAudit).start();
  }, 240_000);

  afterAll(async () => {
    for (const proc of processes) {
      proc.child.kill('SIGTERM');
      await exitWithin(proc, 15_000).catch(() => proc.child.kill('SIGKILL'));
    }
    await audit?.stop();
    await admin?.disconnect().catch(() => undefined);
    await broker?.stop();
  });

  it('lands a policy written through the control API, counts events posted to the gateway, and bans at the enforcer', async () => {
    const policy = { id: 'secure-flood', mode: 'enforce', key: ['ip'], threshold: { count: 20, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } };
    const created = await control.call('POST', '/v1/policies', { token: tokens.admin, body: policy });
    expect(created.status).toBe(201);
    await waitUntil(() => audit.records.some((r) => JSON.stringify(r.value).includes('secure-flood')), 'the audit record of the policy');
    await waitUntil(async () => (await aggregator.metric('banstream_aggregator_policies')) === 1, 'the aggregator to read the policy', 20_000, 100);

    expect((await check('203.0.113.50')).allowed).toBe(true);
    await flood('203.0.113.50');
    const denied = await waitUntil(
      async () => {
        // A ban policy also denies the share over its threshold before the ban (source throttle): wait for the ban itself.
        const d = await check('203.0.113.50');
        return d.source === 'ban' ? d : undefined;
      },
      'the ban to reach the enforcer',
      30_000,
      100,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${await state()}`);
    });
    expect(denied).toMatchObject({ status: 403, source: 'ban', policyId: 'secure-flood' });
    expect(await aggregator.metric('banstream_aggregator_events_consumed_total')).toBeGreaterThanOrEqual(FLOOD);
    for (const [user, proc] of [
      ['control', control.proc],
      ['aggregator', aggregator.proc],
      ['ingest', gateway.proc],
    ] as const) {
      expect(proc.output()).not.toContain(broker.password(user));
      expect(proc.output()).not.toContain('KAFKA_ACCESS_DENIED');
    }
  }, 180_000);

  it('stops the aggregator, naming topic, operation and principal, when its WRITE on bans is taken back while it runs', async () => {
    await revokeTopicAcl(admin, topic('bans'), 'aggregator', 'WRITE');
    const producer = client('aggregator').producer();
    await producer.connect();
    // A tombstone for a key nobody bans: harmless if written before the revocation is in force.
    await untilAcls(() => producer.send({ topic: topic('bans'), messages: [{ key: 'acl-probe', value: null }] }), 'refused', "the aggregator's WRITE on bans");
    await producer.disconnect();

    await flood('203.0.113.51');
    expect(await exitWithin(aggregator.proc, 30_000)).toBe(77);
    const output = aggregator.proc.output();
    // One line at fatal says why (the publication it could not make names its topic alone, not the counts sent with it).
    const fatal = output.split('\n').filter((l) => l.includes('"level":60') && l.includes('"msg":"stopping: '));
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toContain('"msg":"stopping: Kafka refused WRITE on topic banstream.bans.v1 for principal User:aggregator (TOPIC_AUTHORIZATION_FAILED)');
    // The supervisor did not start the worker again.
    expect(output).not.toContain('worker died: replacing it');
    expect((await check('203.0.113.51')).source).not.toBe('ban');
    await grantTopicAcl(admin, topic('bans'), 'aggregator', 'WRITE');
  });

  it('stops the aggregator when its READ on events is taken back while it runs', async () => {
    const second = await startAggregator(aggregatorEnv({ AGGREGATOR_GROUP_ID: 'banstream-aggregator.second' }));
    processes.push(second.proc);
    await revokeTopicAcl(admin, topic('events'), 'aggregator', 'READ');
    expect(await exitWithin(second.proc, 30_000)).toBe(77);
    expect(second.proc.output()).toContain('Kafka refused READ on topic banstream.events.v1 for principal User:aggregator (TOPIC_AUTHORIZATION_FAILED)');
    expect(second.proc.output()).not.toContain('worker died: replacing it');
    await grantTopicAcl(admin, topic('events'), 'aggregator', 'READ');
  }, 180_000);
});
