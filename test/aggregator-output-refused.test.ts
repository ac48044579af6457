import { afterAll, describe, expect, it } from 'vitest';
import { ConfigResourceTypes, ensureTopics, topicFullName, topicSpecs, type Admin, type TopicName } from '@banstream/kafka';
import { eventPartitionKey, keyPartition } from '@banstream/core';
import { SCHEMA_NAMES, type Ban, type DlqRecord, type SubjectCountBatch, type WindowCount } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { catalog, decodeBan, decodeCount, event, publishEvents, publishPolicy, startAggregator, stopAggregators, TopicTail, type Aggregator } from './support/aggregator.js';

const PLANTER = '198.51.100.7';
const FLOODER = '203.0.113.66';

/** Sets `overrides` on one of the test layout's topics, keeping the configuration it was created with. */
async function alterTopic(admin: Admin, prefix: string, topic: TopicName, overrides: Record<string, string>): Promise<void> {
  const spec = topicSpecs({ prefix, partitions: 3, replicationFactor: 1 }).find((s) => s.name === topicFullName(prefix, topic))!;
  const configEntries = Object.entries({ ...spec.configs, ...overrides }).map(([name, value]) => ({ name, value }));
  await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: spec.name, configEntries }] });
  // KRaft applies the change through its metadata log: wait until the broker shows it.
  await waitUntil(
    async () => {
      const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: spec.name }] });
      const entries = described.resources[0]?.configEntries ?? [];
      return Object.entries(overrides).every(([name, value]) => entries.find((e) => e.configName === name)?.configValue === value);
    },
    `${spec.name} to show ${JSON.stringify(overrides)}`,
  );
}

async function readyz(a: Aggregator): Promise<{ status: number; checks: Record<string, boolean> }> {
  const response = await fetch(`http://127.0.0.1:${a.port}/readyz`);
  return { status: response.status, checks: ((await response.json()) as { checks: Record<string, boolean> }).checks };
}

/**
 * Issue 25 item 3, for what the aggregator writes: no output record can stop a
 * partition. A record Kafka refuses for what it is (MESSAGE_TOO_LARGE here, as a
 * topic with a lower max.message.bytes gives) goes to the DLQ as OUTPUT_REFUSED, with
 * where it was going, and publishing goes on; a publication Kafka keeps failing
 * (its topic gone: kafkajs retries it within the send) shows in /readyz and in
 * banstream_aggregator_publication_pending_seconds once past
 * AGGREGATOR_PUBLISH_STUCK_MS, and goes once Kafka takes it.
 */
describe('aggregator output Kafka refuses or keeps failing', () => {
  const { kafkaBrokers } = testInfra();
  const brokers: TestBroker[] = [];
  const running: Aggregator[] = [];

  async function layout(): Promise<TestBroker> {
    const broker = await connectTestBroker(kafkaBrokers, 3);
    brokers.push(broker);
    const policies = broker.topics.name('policies');
    await publishPolicy(broker.producer, policies, { id: 'flood', key: ['ip'], threshold: { count: 50, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } });
    await publishPolicy(broker.producer, policies, { id: 'per-user', key: ['user'], threshold: { count: 1_000_000, interval: '1h' }, action: { type: 'throttle' } });
    return broker;
  }

  afterAll(async () => {
    await stopAggregators(running, 20_000);
    for (const b of brokers) await b.close();
  });

  it('dead-letters a repartition batch and counts Kafka refuses, and goes on counting and banning', async () => {
    const { kafka, admin, producer, topics } = await layout();
    await alterTopic(admin, topics.prefix, 'aggregator-subjects', { 'max.message.bytes': '8192' });
    await alterTopic(admin, topics.prefix, 'counts', { 'max.message.bytes': '100' });
    const events = topics.name('events');
    expect(keyPartition(eventPartitionKey(PLANTER), 3)).not.toBe(keyPartition(eventPartitionKey(FLOODER), 3));
    const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
    const dlq = await new TopicTail<DlqRecord>(kafka, topics.name('dlq'), (b) => catalog.codec(SCHEMA_NAMES.dlqRecord).decode(b)).start();
    const a = await startAggregator({ ...brokers.at(-1)!.env, AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator`, AGGREGATOR_HOT_SHARE: '0', AGGREGATOR_TICK_MS: '20' });
    running.push(a);
    try {
      // 1,000 distinct users in one record: a repartition batch of about 120 KB, over the subjects topic's 8 KiB.
      const record = catalog.codec(SCHEMA_NAMES.requestEventBatch).encode({
        events: Array.from({ length: 1_000 }, (_, i) => event(PLANTER, Date.now(), { userId: `user-${i}-`.padEnd(100, 'x') })),
      });
      await produceOrFail(producer, events, [{ key: eventPartitionKey(PLANTER), value: record }]);
      await publishEvents(
        producer,
        events,
        Array.from({ length: 120 }, (_, i) => event(FLOODER, Date.now() + i)),
        20,
      );

      const ban = await waitUntil(
        () => bans.latest().get(`ip:${FLOODER}`),
        () => `the flood banned\n${a.proc.output().slice(-3000)}`,
        45_000,
        100,
      );
      expect(ban).toMatchObject({ policyId: 'flood', origin: 'aggregator' });
      const refused = (topic: string) => dlq.records.filter((r) => r.value?.reasonCode === 'OUTPUT_REFUSED' && r.value.originalTopic === topic).map((r) => r.value!);
      // Each owner partition's batch, kept whole, where it was going: it can be written there again once the limit is fixed.
      const codec = catalog.codec<SubjectCountBatch>(SCHEMA_NAMES.subjectCountBatch);
      const users = () => refused(topics.name('aggregator-subjects')).flatMap((r) => codec.decode(r.value).entries.filter((e) => e.policyId === 'per-user'));
      await waitUntil(
        () => users().length >= 1_000,
        () => `the repartition batches dead-lettered (${users().length} users)`,
        30_000,
        100,
      );
      expect(new Set(users().map((e) => e.subject)).size).toBe(1_000);
      for (const r of refused(topics.name('aggregator-subjects'))) expect(r).toMatchObject({ offset: -1, reasonMessage: expect.stringContaining('MESSAGE_TOO_LARGE') });
      await waitUntil(() => refused(topics.name('counts')).length > 0, 'the refused counts dead-lettered', 30_000, 100);
      await waitUntil(async () => (await a.metric('banstream_aggregator_output_refused_total', 'output="subjects",dead_lettered="true"')) >= 1, 'refusals counted', 10_000);
      await waitUntil(async () => (await a.metric('banstream_aggregator_output_refused_total', 'output="counts",dead_lettered="true"')) >= 1, 'refused counts counted', 10_000);
      expect((await readyz(a)).status).toBe(200);
    } finally {
      await bans.stop();
      await dlq.stop();
    }
  }, 180_000);

  it('goes on after Kafka refused one partition of a send and took the others (the producer is renewed, not wedged)', async () => {
    const { kafka, admin, producer, topics } = await layout();
    // 1,500 bytes a batch on the counts topic: two counts go, twenty do not.
    await alterTopic(admin, topics.prefix, 'counts', { 'max.message.bytes': '1500' });
    const users: string[][] = [[], [], []];
    for (let i = 0; users[0]!.length < 2 || users[1]!.length < 20; i++) {
      const p = keyPartition(`per-user|user:u${i}`, 3);
      if (p < 2 && users[p]!.length < (p === 0 ? 2 : 20)) users[p]!.push(`u${i}`);
    }
    const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
    const counts = await new TopicTail<WindowCount>(kafka, topics.name('counts'), decodeCount).start();
    // One tick a second: the 22 counts of the record below go out in one send.
    const a = await startAggregator({ ...brokers.at(-1)!.env, AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator`, AGGREGATOR_HOT_SHARE: '0', AGGREGATOR_TICK_MS: '1000' });
    running.push(a);
    try {
      const now = Date.now();
      await produceOrFail(producer, topics.name('events'), [
        {
          key: eventPartitionKey(PLANTER),
          value: catalog.codec(SCHEMA_NAMES.requestEventBatch).encode({ events: [...users[0]!, ...users[1]!].map((u) => event(PLANTER, now, { userId: u })) }),
        },
      ]);
      const counted = () => [...users[0]!, ...users[1]!].filter((u) => counts.latest().get(`per-user|user:${u}`)?.count === 1).length;
      await waitUntil(
        () => counted() === 22,
        () => `every user's count published, one by one (${counted()})\n${a.proc.output().slice(-3000)}`,
        30_000,
        100,
      );
      await publishEvents(
        producer,
        topics.name('events'),
        Array.from({ length: 120 }, (_, i) => event(FLOODER, Date.now() + i)),
        20,
      );
      await waitUntil(
        () => bans.latest().get(`ip:${FLOODER}`),
        () => `the flood banned\n${a.proc.output().slice(-3000)}`,
        30_000,
        100,
      );
      expect((await readyz(a)).status).toBe(200);
    } finally {
      await bans.stop();
      await counts.stop();
    }
  }, 180_000);

  it('shows a publication Kafka keeps failing in /readyz and a metric past the bound, and publishes it once Kafka takes it', async () => {
    const { kafka, admin, producer, topics } = await layout();
    const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
    const a = await startAggregator({ ...brokers.at(-1)!.env, AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator`, AGGREGATOR_TICK_MS: '20', AGGREGATOR_PUBLISH_STUCK_MS: '2000' });
    running.push(a);
    const counts = topicSpecs({ prefix: topics.prefix, partitions: 3, replicationFactor: 1 }).find((t) => t.name === topics.name('counts'))!;
    let countsTail: TopicTail<WindowCount> | undefined;
    try {
      // Nothing written to it yet. Without it, every send of counts fails with
      // UNKNOWN_TOPIC_OR_PARTITION, which kafkajs retries within the send (the broker
      // creates no topic by itself): a publication that never ends, as with Kafka away.
      await admin.deleteTopics({ topics: [counts.name] });
      await publishEvents(
        producer,
        topics.name('events'),
        Array.from({ length: 120 }, (_, i) => event(FLOODER, Date.now() + i)),
        20,
      );
      let last: unknown;
      const stuck = await waitUntil(
        async () => {
          const r = (last = await readyz(a));
          return r.status === 503 && r.checks['output published'] === false && r;
        },
        () => `not ready while the counts cannot be written (${JSON.stringify(last)})\n${a.proc.output().slice(-2000)}`,
        30_000,
        100,
      );
      expect(stuck.checks).toMatchObject({ kafka: true, 'output published': false });
      expect(await a.metric('banstream_aggregator_publication_pending_seconds')).toBeGreaterThan(2);

      // Deleting takes a moment: created again as soon as the broker lets it.
      await waitUntil(async () => (await ensureTopics(admin, [counts]), true), 'the counts topic created again', 30_000, 500);
      countsTail = await new TopicTail<WindowCount>(kafka, counts.name, decodeCount).start();
      await waitUntil(
        () => countsTail!.latest().get(`flood|ip:${FLOODER}`)?.count === 120,
        () => `the counts published once Kafka takes them\n${a.proc.output().slice(-2000)}`,
        60_000,
        100,
      );
      await waitUntil(async () => (await readyz(a)).status === 200, 'ready again', 30_000, 100);
      expect(await a.metric('banstream_aggregator_publication_pending_seconds')).toBeLessThan(2);
      expect(bans.latest().get(`ip:${FLOODER}`)).toMatchObject({ policyId: 'flood' });
    } finally {
      await bans.stop();
      await countsTail?.stop();
    }
  }, 180_000);
});
