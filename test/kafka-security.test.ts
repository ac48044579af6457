import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactedFeed, createKafka, ensureTopics, topicFullName, topicSpecs, type Admin, type Kafka, type TopicName } from '@banstream/kafka';
import { captureLogger, testInfra, waitUntil } from './support/infra.js';
import { describeProcess, exitOf, exitWithin, freePort, REPO_ROOT, spawnService, type RunningProcess } from './support/processes.js';
import { grantRoleAcls, startSecureBroker, type SecureBroker } from './support/secure-broker.js';

/**
 * Kafka secured as a security team runs it: a broker of this test's own with a
 * SASL_SSL listener, a CA made here, KRaft's ACL authorizer and one principal per role
 * (support/secure-broker.ts). Each role's client does its job through the port
 * (createKafka with its security settings), the real enforcer starts and gets ready as
 * User:enforcer, and what an ACL refuses fails at once with the topic, the operation and
 * the principal named.
 */
const PREFIX = 'banstream.';
const topic = (name: TopicName) => topicFullName(PREFIX, name);
const { logger, lines } = captureLogger();

describe('Kafka over SASL_SSL with an ACL per role', () => {
  let broker: SecureBroker;
  let admin: Admin;
  const clients: Kafka[] = [];
  const services: RunningProcess[] = [];
  const client = (user: string, mechanism?: 'scram-sha-512' | 'scram-sha-256' | 'plain') => {
    const kafka = broker.client(user, logger, mechanism);
    clients.push(kafka);
    return kafka;
  };

  beforeAll(async () => {
    broker = await startSecureBroker(['ingest', 'enforcer', 'control', 'aggregator'], logger);
    admin = broker.client('admin', logger).admin();
    await admin.connect();
    await ensureTopics(admin, topicSpecs({ prefix: PREFIX, partitions: 2, replicationFactor: 1 }));
    await grantRoleAcls(admin, PREFIX);
    // ACLs reach the authorizer through the metadata log a moment later: wait until the last role's are in force.
    await waitUntil(
      async () => {
        const probe = broker.client('aggregator', logger).admin();
        try {
          await probe.connect();
          return (await probe.fetchTopicOffsets(topic('counts'))).length > 0;
        } finally {
          await probe.disconnect().catch(() => undefined);
        }
      },
      'the ACLs to be in force',
      20_000,
      200,
    );
  }, 150_000);

  afterAll(async () => {
    for (const proc of services) {
      proc.child.kill('SIGTERM');
      await exitWithin(proc, 15_000).catch(() => proc.child.kill('SIGKILL'));
    }
    await admin?.disconnect().catch(() => undefined);
    await broker?.stop();
  });

  it('lets each role do its job with its own principal (SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN over TLS)', async () => {
    // ingest writes events, with the idempotent producer the gateway uses.
    const ingest = client('ingest').producer({ idempotent: true, maxInFlightRequests: 1 });
    await ingest.connect();
    await ingest.send({ topic: topic('events'), acks: -1, messages: [{ key: '203.0.113.9', value: Buffer.from('event') }] });
    await ingest.disconnect();

    // The aggregator reads them in its group and writes counts and bans.
    const aggregator = client('aggregator', 'scram-sha-256');
    const consumer = aggregator.consumer({ groupId: 'banstream-aggregator.security-test' });
    const seen: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: topic('events'), fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(String(message.value)) });
    await waitUntil(() => seen.includes('event'), 'the aggregator to read the event', 30_000);
    await consumer.disconnect();
    const output = aggregator.producer({ idempotent: true, maxInFlightRequests: 1 });
    await output.connect();
    await output.send({ topic: topic('counts'), acks: -1, messages: [{ key: 'ip:203.0.113.9', value: Buffer.from('count') }] });
    await output.send({ topic: topic('bans'), acks: -1, messages: [{ key: 'ip:203.0.113.9', value: Buffer.from('ban') }] });
    await output.disconnect();

    // The control plane writes policies, the allowlist and its audit (PLAIN: over TLS only).
    const control = client('control', 'plain').producer({ idempotent: true, maxInFlightRequests: 1 });
    await control.connect();
    for (const name of ['policies', 'allowlist', 'audit'] as const) await control.send({ topic: topic(name), acks: -1, messages: [{ key: 'k', value: null }] });
    await control.disconnect();
  });

  it('starts the real enforcer as User:enforcer: it reads its four topics and gets ready', async () => {
    const port = await freePort();
    const enforcer = spawnService('enforcer', {
      ...broker.env('enforcer'),
      TOPIC_PREFIX: PREFIX,
      // No CREATE or ALTER_CONFIGS for an enforcer: an operator (create-topics) made the topics.
      TOPIC_AUTO_CREATE: 'false',
      REDIS_URL: testInfra().redisUrl,
      HTTP_PORT: String(port),
      LOG_LEVEL: 'warn',
    });
    services.push(enforcer);
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
      () => `enforcer ready: ${describeProcess(enforcer)}`,
      60_000,
      100,
    );
    expect(enforcer.output()).not.toContain(broker.password('enforcer'));
  }, 180_000);

  it("refuses the enforcer's principal a write to bans at once, naming the topic, the operation and the principal", async () => {
    const producer = client('enforcer').producer();
    await producer.connect();
    const started = performance.now();
    const error = await producer.send({ topic: topic('bans'), messages: [{ key: 'ip:198.51.100.1', value: Buffer.from('forged ban') }] }).catch((e: unknown) => e);
    const ms = performance.now() - started;
    await producer.disconnect();
    expect((error as Error).message).toBe('Kafka refused WRITE on topic banstream.bans.v1 for principal User:enforcer (TOPIC_AUTHORIZATION_FAILED)');
    expect((error as { code?: string }).code).toBe('KAFKA_ACCESS_DENIED');
    // No retry loop: one round trip, not kafkajs's retry budget.
    expect(ms).toBeLessThan(2_000);
  });

  it('fails a feed whose group the ACLs do not give, rather than waiting for ever', async () => {
    // A record to catch up with, so the feed waits for its consumer.
    const producer = broker.client('admin', logger).producer();
    await producer.connect();
    await producer.send({ topic: topic('bans'), messages: [{ key: 'ip:192.0.2.1', value: Buffer.from('ban') }] });
    await producer.disconnect();
    const kafka = client('enforcer');
    const enforcerAdmin = kafka.admin();
    await enforcerAdmin.connect();
    const feed = new CompactedFeed({ kafka, admin: enforcerAdmin, topic: topic('bans'), groupId: 'someone-elses-group', logger, onRecord: () => undefined });
    await expect(feed.start()).rejects.toThrow('Kafka refused READ on group someone-elses-group for principal User:enforcer (GROUP_AUTHORIZATION_FAILED)');
    await feed.stop().catch(() => undefined);
    await enforcerAdmin.disconnect();
  });

  it('stops a service whose principal may not read its topics, with the refusal in its log', async () => {
    // The gateway's principal where the enforcer's belongs: the enforcer exits (77: refused, final), it does not retry.
    const enforcer = spawnService('enforcer', {
      ...broker.env('ingest'),
      TOPIC_PREFIX: PREFIX,
      TOPIC_AUTO_CREATE: 'false',
      REDIS_URL: testInfra().redisUrl,
      HTTP_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    });
    services.push(enforcer);
    expect(await exitWithin(enforcer, 30_000)).toBe(77);
    expect(enforcer.output()).toMatch(/Kafka refused (DESCRIBE|READ) on topic banstream\.(policies|allowlist|bans|counts)\.v1 for principal User:ingest \(TOPIC_AUTHORIZATION_FAILED\)/);
  });

  it('fails a wrong password and an untrusted broker certificate with errors that say so', async () => {
    const impostor = { ...broker.security('enforcer'), sasl: { mechanism: 'scram-sha-512' as const, username: 'enforcer', password: 'guess' } };
    const loginAdmin = createKafka({ brokers: [broker.brokers], clientId: 'impostor', logger, security: impostor }).admin();
    await expect(loginAdmin.connect()).rejects.toThrow(/^Kafka refused the SASL login of principal User:enforcer \(SASL_AUTHENTICATION_FAILED\)/);
    const untrusting = createKafka({
      brokers: [broker.brokers],
      clientId: 'wrong-ca',
      logger,
      security: { ...broker.security('enforcer'), tls: { ca: readFileSync(broker.otherCaFile, 'utf8') } },
    }).admin();
    await expect(untrusting.connect()).rejects.toThrow(/^TLS: the certificate of Kafka broker 127\.0\.0\.1:\d+ is not trusted \(\w+/);
  });

  it('never logs a password', () => {
    const logged = JSON.stringify(lines());
    for (const user of ['admin', 'ingest', 'enforcer', 'control', 'aggregator']) expect(logged).not.toContain(broker.password(user));
  });
});

describe('Kafka security settings at start', () => {
  it('refuses SASL PLAIN without TLS (exit 78, naming the variable) before connecting anywhere', async () => {
    const enforcer = spawnService('enforcer', {
      KAFKA_BROKERS: '127.0.0.1:9',
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_USERNAME: 'enforcer',
      KAFKA_SASL_PASSWORD: 'hunter2',
      REDIS_URL: 'redis://127.0.0.1:9',
      HTTP_PORT: String(await freePort()),
    });
    expect(await exitWithin(enforcer, 15_000)).toBe(78);
    expect(enforcer.output()).toContain('KAFKA_SASL_MECHANISM: plain without KAFKA_TLS=true');
    expect(enforcer.output()).not.toContain('hunter2');
  });

  it('refuses an unreadable CA file in the create-topics CLI too', async () => {
    const cli = spawn(process.execPath, ['packages/kafka/dist/cli/create-topics.js'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', KAFKA_BROKERS: '127.0.0.1:9', KAFKA_TLS: 'true', KAFKA_TLS_CA_FILE: '/nonexistent/ca.pem' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    cli.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await exitOf(cli);
    expect(code).toBe(78);
    expect(out).toContain('KAFKA_TLS_CA_FILE: cannot read /nonexistent/ca.pem');
  });
});
