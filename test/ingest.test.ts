import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventPartitionKey } from '@banstream/core';
import { topicFullName } from '@banstream/kafka';
import { requestEvent, SCHEMA_NAMES, type RequestEventBatch } from '@banstream/schemas';
import { catalog, TopicTail } from './support/aggregator.js';
import { captureLogger, testInfra, uniqueName, waitUntil } from './support/infra.js';
import { GEO_DB, kafkaPartition, murmur2, postedEvent, startGateway, type Gateway } from './support/ingest.js';
import { testKafka } from './support/kafka.js';
import { exitWithin } from './support/processes.js';

const PARTITIONS = 6;
const TOKEN = 'edge-token-for-tests-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const batchCodec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
// The gateway as a real process against the shared broker, on topics of its own.
describe('the ingest gateway', () => {
  const prefix = `${uniqueName('ingest')}.`;
  const kafka = testKafka(testInfra().kafkaBrokers, captureLogger().logger);
  let gateway: Gateway;
  let tail: TopicTail<RequestEventBatch>;

  beforeAll(async () => {
    gateway = await startGateway({
      KAFKA_BROKERS: testInfra().kafkaBrokers,
      TOPIC_PREFIX: prefix,
      TOPIC_PARTITIONS: String(PARTITIONS),
      INGEST_GEOIP_DB: GEO_DB,
      INGEST_EDGE_TOKENS: TOKEN,
      INGEST_BODY_LIMIT_BYTES: String(64 * 1024),
    });
    tail = await new TopicTail(kafka, topicFullName(prefix, 'events'), (b) => batchCodec.decode(b)).start();
  });

  afterAll(async () => {
    gateway?.proc.child.kill('SIGKILL');
    await tail?.stop();
    const admin = kafka.admin();
    await admin.connect();
    const ours = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours });
    await admin.disconnect();
  });

  const onTopic = () => tail.records.flatMap((r) => (r.value?.events ?? []).map((event) => ({ event, key: r.key, partition: r.partition })));

  it('puts posted events on the events topic, decodable, keyed by /24 or /48, partitioned by murmur2 of the key, with the country filled in', async () => {
    // The partitioner check below is only as good as this murmur2: the Java client's own vectors.
    expect([murmur2(Buffer.from('21')), murmur2(Buffer.from('foobar')), murmur2(Buffer.from('a-little-bit-long-string'))]).toEqual([-973932308, -790332482, -985981536]);

    const json = [
      postedEvent('8.8.8.8'),
      postedEvent('8.8.8.200'),
      postedEvent('81.2.69.160'),
      postedEvent('2a01:e0a::1'),
      postedEvent('2A01:0E0A:0000::FFFF'),
      postedEvent('193.51.100.1', { country: 'de', region: 'DE-BE' }), // a CDN-supplied country is kept
    ];
    const avro = [requestEvent(postedEvent('1.1.1.1')), requestEvent(postedEvent('::ffff:8.8.4.4'))];
    const jsonRes = await gateway.post(JSON.stringify(json), 'application/json', AUTH);
    expect([jsonRes.status, await jsonRes.json()]).toEqual([202, { accepted: 6 }]);
    const avroRes = await gateway.post(batchCodec.encode({ events: avro }), 'application/avro', AUTH);
    expect([avroRes.status, await avroRes.json()]).toEqual([202, { accepted: 2 }]);

    await waitUntil(() => onTopic().length >= 8, 'the 8 events on the events topic');
    const arrived = onTopic();
    expect(arrived).toHaveLength(8);
    for (const { event, key, partition } of arrived) {
      expect(key).toBe(eventPartitionKey(event.ip));
      expect(partition).toBe(kafkaPartition(key, PARTITIONS));
    }
    const byId = new Map(arrived.map((a) => [a.event.eventId, a]));
    const countryOf = (e: { eventId?: string }) => byId.get(e.eventId!)?.event.country;
    expect([...json, ...avro].map(countryOf)).toEqual(['US', 'US', 'GB', 'FR', 'FR', 'DE', 'AU', 'US']);
    expect(byId.get(json[5]!.eventId!)?.event.region).toBe('DE-BE');
    // Normalised on the way: canonical IPv6 text, IPv4-mapped as IPv4; one /24 and one /48 shared by two events each.
    expect(byId.get(json[4]!.eventId!)).toMatchObject({ key: '2a01:e0a::/48', event: { ip: '2a01:e0a::ffff' } });
    expect(byId.get(avro[1]!.eventId)).toMatchObject({ key: '8.8.4.0/24', event: { ip: '8.8.4.4' } });
    expect(new Set(arrived.filter((a) => a.key === '8.8.8.0/24').map((a) => a.partition)).size).toBe(1);

    await waitUntil(async () => (await gateway.metric('banstream_edge_events_delivered_total')) === 8, 'the delivered counter to reach 8');
  });

  it('answers each kind of bad input with its own status and message, and lets none of it through', async () => {
    const before = onTopic().length;
    const ok = JSON.stringify([postedEvent('8.8.8.8')]);
    const answers: [number, { code?: string; detail?: string; errors?: unknown }][] = [];
    const send = async (body: string | Buffer, type: string, headers: Record<string, string> = AUTH) => {
      const res = await gateway.post(body, type, headers);
      if (res.status >= 400) expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      answers.push([res.status, (await res.json()) as { code?: string; detail?: string }]);
    };
    await send(ok, 'application/json', {});
    await send(ok, 'application/json', { authorization: `Bearer ${TOKEN}-not` });
    await send(ok, 'text/csv');
    await send(JSON.stringify(Array.from({ length: 400 }, () => postedEvent('8.8.8.8'))), 'application/json');
    await send('[{"eventId": ', 'application/json');
    await send(Buffer.from('plain avro without the header'), 'application/avro');
    await send(JSON.stringify([postedEvent('8.8.8.8'), postedEvent('8.8.8.999'), postedEvent('8.8.8.8', { path: `/${'x'.repeat(3000)}` })]), 'application/json');

    expect(answers.map(([status, body]) => [status, body.code])).toEqual([
      [401, 'UNAUTHORIZED'],
      [401, 'UNAUTHORIZED'],
      [415, 'UNSUPPORTED_MEDIA_TYPE'],
      [413, 'BODY_TOO_LARGE'],
      [400, 'BAD_JSON'],
      [400, 'BAD_AVRO'],
      [400, 'INVALID_EVENTS'],
    ]);
    expect(answers[0]![1].detail).toBe('a valid edge token is required: Authorization: Bearer <token>');
    expect(answers[2]![1].detail).toContain('application/avro');
    expect(answers[3]![1].detail).toBe('the body is larger than the limit of 65536 bytes (INGEST_BODY_LIMIT_BYTES): send smaller batches');
    expect(answers[5]![1].detail).toContain('SCHEMA_BAD_MAGIC');
    expect(answers[6]![1]).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      code: 'INVALID_EVENTS',
      detail: '2 of 3 events are invalid; none of the batch was accepted',
      errors: [
        { index: 1, path: '/ip', message: 'not an IP address: "8.8.8.999" (IPv4 octet above 255)' },
        { index: 2, path: '/path', message: 'Expected string length less or equal to 2048' },
      ],
    });
    // Nothing of the refused requests reaches Kafka: a valid request posted after them is the only new event.
    await send(ok, 'application/json');
    await waitUntil(() => onTopic().length > before, 'the last valid event on the topic');
    await new Promise((r) => setTimeout(r, 500));
    expect(onTopic().length).toBe(before + 1);
    expect(await gateway.metric('banstream_edge_events_dropped_total')).toBe(0);
  });

  it('drains on SIGTERM and exits 0', async () => {
    gateway.proc.child.kill('SIGTERM');
    expect(await exitWithin(gateway.proc, 15_000)).toBe(0);
  });
});
