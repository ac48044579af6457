import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBanstreamError } from '@banstream/core';
import { KeyPartitioner, produceRequestEncodings, type Admin, type Consumer, type Producer } from '@banstream/kafka';
import { loadSchemaCatalog, SCHEMA_NAMES, type RequestEvent, type RequestEventBatch } from '@banstream/schemas';
import { captureLogger, testInfra, uniqueName, waitUntil } from './support/infra.js';
import { createTestTopic, produceOrFail, testKafka } from './support/kafka.js';
import { REPO_ROOT } from './support/processes.js';

function sampleEvent(i: number): RequestEvent {
  return {
    eventId: `evt-${i}`,
    timestamp: 1_790_000_000_000 + i,
    ip: `203.0.113.${i % 256}`,
    country: i % 2 ? 'FR' : null,
    region: i % 2 ? 'FR-IDF' : null,
    asn: 64_500 + i,
    method: 'POST',
    host: 'shop.example',
    path: '/login',
    route: '/login',
    status: i % 3 ? 200 : 401,
    userId: i % 4 ? `user-${i}` : null,
    apiKeyHash: null,
    headers: { 'user-agent': `curl/8.${i}` },
    edgeId: 'edge-a',
    latencyMs: i / 10,
    cost: 1 + (i % 3),
  };
}

describe('RequestEvent batches through the real broker', () => {
  const catalog = loadSchemaCatalog();
  const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
  const { logger } = captureLogger();
  const kafka = testKafka(testInfra().kafkaBrokers, logger);
  let admin: Admin;
  let producer: Producer;
  let consumer: Consumer;
  let topic: string;

  beforeAll(async () => {
    admin = kafka.admin();
    await admin.connect();
    topic = await createTestTopic(admin, 'events', 3);
    producer = kafka.producer({ idempotent: true, createPartitioner: KeyPartitioner });
    await producer.connect();
    consumer = kafka.consumer({ groupId: uniqueName('roundtrip'), maxWaitTimeInMs: 100 });
    await consumer.connect();
  });

  afterAll(async () => {
    await consumer.disconnect();
    await producer.disconnect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  });

  it('produces single-object encoded batches, consumes them back and decodes every event', async () => {
    const batches: RequestEventBatch[] = [{ events: Array.from({ length: 500 }, (_, i) => sampleEvent(i)) }, { events: [sampleEvent(1_000)] }];
    const encoded = batches.map((b) => codec.encode(b));
    // The single-object header: C3 01, then the writer schema's fingerprint.
    expect([...encoded[0]!.subarray(0, 2)]).toEqual([0xc3, 0x01]);

    await produceOrFail(
      producer,
      topic,
      encoded.map((value, i) => ({ key: `203.0.113.0/24#${i}`, value })),
    );

    const received = new Map<string, RequestEventBatch>();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        received.set(message.key!.toString(), codec.decode(message.value!));
      },
    });
    await waitUntil(() => received.size === 2, 'both batches to be consumed');
    expect(received.get('203.0.113.0/24#0')).toEqual(batches[0]);
    expect(received.get('203.0.113.0/24#1')).toEqual(batches[1]);
  });

  it('writes produce requests in one pass (installKafkaPatches) that the broker accepts and gives back byte for byte', async () => {
    const before = produceRequestEncodings();
    const sent = Array.from({ length: 40 }, (_, i) => ({
      key: `203.0.113.0/24#one-pass-${i}-é`,
      value: Buffer.from(Array.from({ length: (i * 37) % 300 }, (_, j) => (i + j) & 0xff)),
      timestamp: String(1_790_000_000_000 + i),
      headers: { trace: `t-${i}`, hop: [Buffer.from([i]), 'edge-a'] },
    }));
    await producer.send({ topic, acks: -1, messages: sent });
    const after = produceRequestEncodings();
    expect(after.onePass).toBeGreaterThan(before.onePass);
    expect(after.kafkajs).toBe(before.kafkajs);

    const got = new Map<string, { value: Buffer; timestamp: string; headers: Record<string, unknown> }>();
    const reader = kafka.consumer({ groupId: uniqueName('one-pass'), maxWaitTimeInMs: 100 });
    await reader.connect();
    await reader.subscribe({ topic, fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        const key = message.key!.toString();
        if (key.includes('one-pass')) got.set(key, { value: message.value!, timestamp: message.timestamp, headers: message.headers ?? {} });
      },
    });
    try {
      await waitUntil(() => got.size === sent.length, 'every one-pass record to be consumed');
    } finally {
      await reader.disconnect();
    }
    for (const m of sent) {
      const back = got.get(m.key)!;
      expect(back.value.equals(m.value)).toBe(true);
      expect(back.timestamp).toBe(m.timestamp);
      expect(back.headers.trace?.toString()).toBe(m.headers.trace);
      expect((back.headers.hop as Buffer[]).map((h) => h.toString('hex'))).toEqual([Buffer.from([sent.indexOf(m)]).toString('hex'), Buffer.from('edge-a').toString('hex')]);
    }
  });

  it('groups a send by partition in one pass once installKafkaPatches() ran before kafkajs loaded, as in every service', () => {
    // A process of its own, as a service's: importing the port patches nothing, the explicit call does.
    const script = `
      const port = await import('@banstream/kafka');
      const { createRequire } = await import('node:module');
      const require = createRequire(process.cwd() + '/');
      const before = [port.kafkajsLoaded(), port.kafkajsGroupingFixed()];
      port.installKafkaPatches();
      require('kafkajs');
      console.log(JSON.stringify([...before, port.kafkajsGroupingFixed(), require('kafkajs/src/producer/groupMessagesPerPartition.js').name]));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual([false, false, true, 'groupMessagesPerPartition']);
  });

  it('turns a record that is not a banstream batch into a typed error, not a crash', () => {
    const error = (() => {
      try {
        codec.decode(Buffer.from('{"json":"not avro"}'));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isBanstreamError(error, 'SCHEMA_BAD_MAGIC')).toBe(true);
  });
});
