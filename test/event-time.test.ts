import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventPartitionKey } from '@banstream/core';
import { topicFullName } from '@banstream/kafka';
import { requestEvent, SCHEMA_NAMES, type Ban, type DlqRecord, type RequestEvent, type RequestEventBatch, type WindowCount } from '@banstream/schemas';
import { catalog, decodeBan, decodeCount, event, publishEvents, publishPolicy, startAggregator, stopAggregators, TopicTail, type Aggregator } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { captureLogger, testInfra, uniqueName, waitUntil } from './support/infra.js';
import { kafkaPartition, postedEvent, startGateway, type Gateway } from './support/ingest.js';
import { testKafka } from './support/kafka.js';
import { exitWithin } from './support/processes.js';

const PARTITIONS = 6;
const THRESHOLD = 100;
const CHUNKS = 20;
const PER_CHUNK = 20;
/** The skew both services allow by default; AGGREGATOR_GRACE_MS is 5 s as well. */
const SKEW_MS = 5_000;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A /24 whose events land on each partition of the events topic, found by the partitioner's own hash. */
function networksPerPartition(): string[] {
  const found = new Map<number, string>();
  for (let x = 0; found.size < PARTITIONS; x++) {
    const net = `10.77.${x}`;
    const p = kafkaPartition(eventPartitionKey(`${net}.1`), PARTITIONS);
    if (!found.has(p)) found.set(p, net);
  }
  return [...found.entries()].sort(([a], [b]) => a - b).map(([, net]) => net);
}

/**
 * Issue 25: one event dated 55 s ahead moved its partition's clock, and a flood from
 * the same /24 after it was counted late and never banned. Here events dated a minute
 * and an hour ahead go to every partition throughout a flood, next to honest traffic
 * (some of it from edges whose clocks run a few seconds fast), and the real aggregator
 * still bans the flood as fast as one without them, dead-letters each of them, and
 * counts every honest event.
 */
describe('event time the sender cannot steer: the aggregator', () => {
  const { kafkaBrokers } = testInfra();
  const host = `${uniqueName('evtime')}.example`;
  const nets = networksPerPartition();
  let broker: TestBroker;
  let aggregator: Aggregator | undefined;
  let bans: TopicTail<Ban>;
  let counts: TopicTail<WindowCount>;
  let dlq: TopicTail<DlqRecord>;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, PARTITIONS);
    const policies = broker.topics.name('policies');
    await publishPolicy(broker.producer, policies, { id: 'flood', key: ['ip'], threshold: { count: THRESHOLD, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } });
    // Every counted event of this test, repartitioned by host (so through the second stage): the exact total.
    await publishPolicy(broker.producer, policies, { id: 'total', key: ['host'], threshold: { count: 1_000_000_000, interval: '1h' }, action: { type: 'throttle' } });
    aggregator = await startAggregator({
      ...broker.env,
      AGGREGATOR_GROUP_ID: `${broker.topics.prefix}aggregator`,
      AGGREGATOR_TICK_MS: '20',
      AGGREGATOR_HOT_SHARE: '0',
      GEO_ALERT_ENABLED: 'false',
    });
    bans = await new TopicTail(broker.kafka, broker.topics.name('bans'), decodeBan).start();
    counts = await new TopicTail(broker.kafka, broker.topics.name('counts'), decodeCount).start();
    dlq = await new TopicTail(broker.kafka, broker.topics.name('dlq'), (b) => catalog.codec(SCHEMA_NAMES.dlqRecord).decode(b)).start();
  }, 90_000);

  afterAll(async () => {
    if (aggregator) await stopAggregators([aggregator], 15_000);
    await Promise.all([bans?.stop(), counts?.stop(), dlq?.stop()]);
    const ours = (await broker.admin.listTopics()).filter((t) => t.startsWith(broker.topics.prefix));
    await broker.admin.deleteTopics({ topics: ours }).catch(() => undefined);
    await broker?.close();
  });

  let honestSent = 0;
  let futureSent = 0;

  /**
   * 400 requests from `ip` in chunks every 50 ms, each chunk with honest traffic on every
   * partition (2 s old) and, with `ahead`, on every partition, the flood's own /24
   * included and ahead of the flood in its records: honest events from an edge whose
   * clock is 4.5 s fast (within the skew), and events dated a minute and an hour ahead.
   * Returns ms from the crossing chunk's acknowledgement to the ban on the bans topic.
   */
  async function flood(ip: string, ahead: boolean): Promise<number> {
    const subject = `ip:${ip}`;
    const banned = waitUntil(() => bans.records.some((r) => r.key === subject && r.value) && Date.now(), `a ban for ${subject}`, 30_000, 5);
    let crossedAt: number | undefined;
    for (let chunk = 0; chunk < CHUNKS; chunk++) {
      const now = Date.now();
      const events: RequestEvent[] = [];
      for (const net of nets) {
        events.push(event(`${net}.10`, now - 2_000, { host }));
        honestSent++;
        if (!ahead) continue;
        events.push(event(`${net}.11`, now + SKEW_MS - 500, { host }), event(`${net}.20`, now + 55_000, { host }), event(`${net}.20`, now + 3_600_000, { host }));
        honestSent++;
        futureSent += 2;
      }
      for (let i = 0; i < PER_CHUNK; i++) events.push(event(ip, now - 500 + i, { host }));
      await publishEvents(broker.producer, broker.topics.name('events'), events);
      if (crossedAt === undefined && (chunk + 1) * PER_CHUNK > THRESHOLD) crossedAt = Date.now();
      await pause(50);
    }
    return (await banned) - crossedAt!;
  }

  it('bans a flood within the usual delay while events dated ahead reach every partition, dead-letters those, and counts every honest event', async () => {
    const baseline = await flood(`${nets[1]}.66`, false);
    // The attacker's /24 (nets[0]) gets events dated ahead too, in the flood's own records.
    const attacked = await flood(`${nets[0]}.66`, true);
    expect(attacked, `ban delay with events dated ahead (${attacked} ms) against without (${baseline} ms)`).toBeLessThan(Math.max(2 * baseline, baseline + 1_000));

    await waitUntil(() => dlq.records.length >= futureSent, `${futureSent} dead letters`, 30_000);
    const letters = dlq.records.map((r) => r.value!);
    expect(letters).toHaveLength(futureSent);
    expect(new Set(letters.map((d) => d.reasonCode))).toEqual(new Set(['EVENT_TIME_OUT_OF_RANGE']));
    expect(new Set(letters.map((d) => d.partition)).size).toBe(PARTITIONS);
    expect(letters[0]!.reasonMessage).toMatch(/^events\[\d+\]: timestamp is \d+ ms ahead of the time its record was received \(at most 5000\)$/);

    // Every honest event and every flood event counted: none judged late behind an early one.
    const expected = honestSent + 2 * CHUNKS * PER_CHUNK;
    await waitUntil(
      () => counts.latest().get(`total|host:${host}`)?.count === expected,
      () => `the total to reach ${expected} (now ${counts.latest().get(`total|host:${host}`)?.count})`,
      30_000,
    );
    expect(await aggregator!.metric('banstream_aggregator_late_events_total')).toBe(0);
    expect(
      bans.records
        .filter((r) => r.value)
        .map((r) => r.key)
        .sort(),
    ).toEqual([`ip:${nets[0]}.66`, `ip:${nets[1]}.66`].sort());
  }, 120_000);
});

/** The gateway refuses an event dated too far ahead, naming it, and lets nothing of its batch through. */
describe('event time the sender cannot steer: the ingest gateway', () => {
  const prefix = `${uniqueName('evtime-ingest')}.`;
  const kafka = testKafka(testInfra().kafkaBrokers, captureLogger().logger);
  const token = 'edge-token-for-event-time-tests-0123';
  const auth = { authorization: `Bearer ${token}` };
  const batchCodec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
  let gateway: Gateway | undefined;
  let tail: TopicTail<RequestEventBatch>;

  beforeAll(async () => {
    gateway = await startGateway({ KAFKA_BROKERS: testInfra().kafkaBrokers, TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '3', INGEST_EDGE_TOKENS: token });
    tail = await new TopicTail(kafka, topicFullName(prefix, 'events'), (b) => batchCodec.decode(b)).start();
  }, 90_000);

  afterAll(async () => {
    gateway?.proc.child.kill('SIGTERM');
    if (gateway) await exitWithin(gateway.proc, 15_000).catch(() => gateway!.proc.child.kill('SIGKILL'));
    await tail?.stop();
    const admin = kafka.admin();
    await admin.connect();
    const ours = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours });
    await admin.disconnect();
  });

  it('answers 400 naming the event dated ahead, its field and how far ahead, in JSON and in Avro, and publishes none of the batch', async () => {
    const ip = '198.51.100.7';
    const json = [postedEvent(ip), postedEvent(ip, { timestamp: Date.now() + 55_000 })];
    const avro = [requestEvent(postedEvent(ip)), requestEvent(postedEvent(ip, { timestamp: Date.now() + 3_600_000 }))];
    const answers = [await gateway!.post(JSON.stringify(json), 'application/json', auth), await gateway!.post(batchCodec.encode({ events: avro }), 'application/avro', auth)];
    const bodies = await Promise.all(answers.map((a) => a.json() as Promise<{ code: string; status: number; detail: string; errors: { index: number; path: string; message: string }[] }>));
    expect(answers.map((a) => a.status)).toEqual([400, 400]);
    for (const body of bodies) {
      expect(body).toMatchObject({ code: 'INVALID_EVENTS', status: 400, detail: '1 of 2 events are invalid; none of the batch was accepted' });
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]).toMatchObject({ index: 1, path: '/timestamp' });
    }
    expect(bodies[0]!.errors[0]!.message).toMatch(/^is 5\d{4} ms ahead of the gateway clock \(at most 5000 ms ahead is accepted\)$/);
    expect(bodies[1]!.errors[0]!.message).toMatch(/^is 3\d{6} ms ahead of the gateway clock \(at most 5000 ms ahead is accepted\)$/);

    // A valid batch from the same /24 after them: same partition, so once it is on the topic anything accepted before it would be too.
    const fine = postedEvent(ip, { timestamp: Date.now() + 1_000 }); // a clock a second fast: within the skew
    const accepted = await gateway!.post(JSON.stringify([fine]), 'application/json', auth);
    expect(accepted.status).toBe(202);
    const arrived = () => tail.records.flatMap((r) => r.value?.events ?? []);
    await waitUntil(() => arrived().some((e) => e.eventId === fine.eventId), 'the valid event on the events topic');
    expect(arrived().map((e) => e.eventId)).toEqual([fine.eventId]);
  });
});
