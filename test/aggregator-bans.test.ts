import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka, Producer } from '@banstream/kafka';
import { SCHEMA_NAMES, type Ban, type BanHistoryEntry, type DlqRecord } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { exitWithin } from './support/processes.js';
import { catalog, decodeBan, event, publishEvents, publishPolicy, startAggregator, TopicTail, type Aggregator } from './support/aggregator.js';

/** One aggregator against the real broker: ban lifecycle, preview, allowlist, hot reload, DLQ. */
describe('aggregator bans', () => {
  const { kafkaBrokers } = testInfra();
  let kafka: Kafka;
  let producer: Producer;
  let topics: TestBroker['topics'];
  let broker: TestBroker | undefined;
  let aggregator: Aggregator;
  let bans: TopicTail<Ban>;
  let history: TopicTail<BanHistoryEntry>;

  const banPolicy = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    key: ['ip'],
    match: { paths: [`/${id}`] },
    threshold: { count: 20, interval: '1m' },
    action: { type: 'ban', banDuration: '3s', status: 403 },
    ...extra,
  });
  const attack = (ip: string, path: string, n: number) => Array.from({ length: n }, (_, i) => event(ip, Date.now() - n + i, { path }));

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    ({ kafka, producer, topics } = broker);
    await publishPolicy(producer, topics.name('policies'), banPolicy('burst', { mode: 'enforce' }));
    await publishPolicy(producer, topics.name('policies'), banPolicy('dry', { mode: 'preview' }));
    await publishPolicy(producer, topics.name('policies'), banPolicy('proof', { match: { hosts: ['evidence.example'] } }));
    const allow = catalog.codec(SCHEMA_NAMES.allowEntry).encode({ entry: 'ip:198.51.100.7', reason: 'our probe', addedBy: 'tests', addedAt: Date.now(), expiresAt: null });
    await produceOrFail(producer, topics.name('allowlist'), [{ key: 'ip:198.51.100.7', value: allow }]);
    aggregator = await startAggregator({
      KAFKA_BROKERS: kafkaBrokers,
      TOPIC_PREFIX: topics.prefix,
      TOPIC_PARTITIONS: '3',
      AGGREGATOR_TICK_MS: '20',
      AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator`,
    });
    bans = await new TopicTail(kafka, topics.name('bans'), decodeBan).start();
    history = await new TopicTail(kafka, topics.name('ban-history'), (b) => catalog.codec(SCHEMA_NAMES.banHistory).decode(b)).start();
  }, 90_000);

  afterAll(async () => {
    aggregator?.proc.child.kill('SIGTERM');
    if (aggregator) await exitWithin(aggregator.proc, 15_000);
    await bans?.stop();
    await history?.stop();
    await broker?.close();
  });

  const recordsFor = (subject: string) => bans.records.filter((r) => r.key === subject);

  it('bans an attacker once when it crosses the threshold, then lifts the ban with a tombstone', async () => {
    await publishEvents(producer, topics.name('events'), attack('203.0.113.9', '/burst', 60));
    const ban = await waitUntil(() => recordsFor('ip:203.0.113.9')[0]?.value ?? undefined, 'a ban for ip:203.0.113.9');
    expect(ban).toMatchObject({ subject: 'ip:203.0.113.9', policyId: 'burst', preview: false, origin: 'aggregator', httpStatus: 403, escalationLevel: 0 });
    expect(ban.evidenceCount).toBe(21);
    expect(ban.expiresAt - ban.startedAt).toBe(3000);
    await waitUntil(() => recordsFor('ip:203.0.113.9').some((r) => r.value === null), 'the tombstone after expiry', 20_000);
    const records = recordsFor('ip:203.0.113.9');
    expect(records.map((r) => (r.value ? 'ban' : 'tombstone'))).toEqual(['ban', 'tombstone']);
    // The ban-history topic keeps both, with the ban that ended (the bans topic compacts them away).
    const entries = await waitUntil(() => {
      const e = history.records.filter((r) => r.key === 'ip:203.0.113.9').map((r) => r.value!);
      return e.length === 2 ? e : undefined;
    }, 'the ban and its expiry in the history');
    expect(entries.map((e) => [e.action, e.actor, e.ban.banId])).toEqual([
      ['ban', null, ban.banId],
      ['expire', null, ban.banId],
    ]);
    expect(entries[1]!.at).toBe(ban.expiresAt);
  });

  it("gives the ban its evidence: the window count, the window's first and last events and the top values of what the subject sent", async () => {
    const t0 = Date.now() - 30;
    const sent = Array.from({ length: 30 }, (_, i) =>
      event('203.0.113.50', t0 + i, {
        host: 'evidence.example',
        method: 'POST',
        path: i % 3 === 2 ? '/reset' : '/login',
        status: i % 3 === 2 ? 200 : 401,
        headers: { 'user-agent': 'evil-bot/1', accept: '*/*' },
        edgeId: i < 15 ? 'edge-a' : 'edge-b',
      }),
    );
    await publishEvents(producer, topics.name('events'), sent);
    const ban = await waitUntil(() => recordsFor('ip:203.0.113.50')[0]?.value ?? undefined, 'a ban for ip:203.0.113.50');
    // Threshold 20: the 21st event bans. Hot from the 10th (AGGREGATOR_HOT_SHARE 0.5), so events 10 to 21 are sampled.
    expect(ban).toMatchObject({ policyId: 'proof', evidenceCount: 21, startedAt: t0 + 20 });
    expect(ban.evidence).toEqual({
      firstEventAt: t0,
      lastEventAt: t0 + 20,
      sampledEvents: 12,
      paths: [
        { value: '/login', count: 8 },
        { value: '/reset', count: 4 },
      ],
      methods: [{ value: 'POST', count: 12 }],
      statuses: [
        { value: '401', count: 8 },
        { value: '200', count: 4 },
      ],
      userAgents: [{ value: 'evil-bot/1', count: 12 }],
      edges: [
        { value: 'edge-a', count: 6 },
        { value: 'edge-b', count: 6 },
      ],
    });
  });

  it('marks the bans of a preview policy', async () => {
    await publishEvents(producer, topics.name('events'), attack('203.0.113.10', '/dry', 30));
    const ban = await waitUntil(() => recordsFor('ip:203.0.113.10')[0]?.value ?? undefined, 'a preview ban');
    expect(ban).toMatchObject({ policyId: 'dry', preview: true });
  });

  it('never bans an allowlisted subject', async () => {
    await publishEvents(producer, topics.name('events'), [...attack('198.51.100.7', '/burst', 60), ...attack('198.51.100.8', '/burst', 60)]);
    await waitUntil(() => recordsFor('ip:198.51.100.8').length > 0, 'the ban of the neighbour that is not allowlisted');
    expect(recordsFor('ip:198.51.100.7')).toEqual([]);
  });

  it('applies a policy published while it runs, and rejects an invalid one with its reason', async () => {
    const invalid = catalog.codec(SCHEMA_NAMES.policy).encode({
      id: 'broken',
      version: 1,
      description: '',
      owner: 'tests',
      mode: 'enforce',
      enabled: true,
      definition: JSON.stringify({ key: ['ip'], threshold: { count: 0, interval: '1m' }, action: { type: 'ban', banDuration: '1m' } }),
      updatedBy: 'tests',
      updatedAt: Date.now(),
    });
    await produceOrFail(producer, topics.name('policies'), [{ key: 'broken', value: invalid }]);
    await publishPolicy(producer, topics.name('policies'), banPolicy('late-rule'));
    await waitUntil(async () => (await aggregator.metric('banstream_aggregator_policy_rejected_total')) === 1, 'the invalid policy to be rejected');
    await waitUntil(async () => (await aggregator.metric('banstream_aggregator_policies')) === 4, 'the new policy to be applied');
    await publishEvents(producer, topics.name('events'), attack('203.0.113.11', '/late-rule', 30));
    const ban = await waitUntil(() => recordsFor('ip:203.0.113.11')[0]?.value ?? undefined, 'a ban from the hot-loaded policy');
    expect(ban.policyId).toBe('late-rule');
    expect(aggregator.proc.output()).toMatch(/policy rejected.*threshold\.count: must be > 0|threshold\.count: must be > 0.*policy rejected/);
  });

  it('decodes the headers once a policy that reads them is published', async () => {
    // Until now no policy read headers, so the aggregator was not decoding them.
    await publishPolicy(producer, topics.name('policies'), { ...banPolicy('agents'), key: ['header:user-agent'] });
    await waitUntil(async () => (await aggregator.metric('banstream_aggregator_policies')) === 5, 'the header policy to be applied');
    const bots = Array.from({ length: 30 }, (_, i) => event(`192.0.2.${i + 1}`, Date.now() - 30 + i, { path: '/agents', headers: { 'user-agent': 'evil-bot/1' } }));
    await publishEvents(producer, topics.name('events'), bots);
    const ban = await waitUntil(() => bans.records.find((r) => r.value?.policyId === 'agents')?.value ?? undefined, 'a ban keyed on the user agent');
    expect(ban.subject).toBe('header.user-agent:evil-bot/1');
    // Repartitioned (a header pins no network): the events arrive summed per 60 ms of a record, so the count may pass 21 in one step.
    expect(ban.evidenceCount).toBeGreaterThanOrEqual(21);
    expect(ban.evidenceCount).toBeLessThanOrEqual(30);
  });

  it('sends undecodable records and invalid events to the DLQ with the reason, and keeps counting', async () => {
    const dlq = await new TopicTail<DlqRecord>(kafka, topics.name('dlq'), (b) => catalog.codec(SCHEMA_NAMES.dlqRecord).decode(b)).start();
    try {
      await produceOrFail(producer, topics.name('events'), [{ key: '203.0.113.0/24', value: Buffer.from('not avro') }]);
      await publishEvents(producer, topics.name('events'), [event('not-an-ip', Date.now()), event('203.0.113.12', Date.now() + 3_600_000), ...attack('203.0.113.13', '/burst', 30)]);
      await waitUntil(() => recordsFor('ip:203.0.113.13').length > 0, 'the ban after the bad records');
      await waitUntil(() => dlq.records.length >= 3, 'three DLQ records');
      const reasons = dlq.records.map((r) => r.value!.reasonCode).sort();
      expect(reasons).toEqual(['EVENT_TIME_OUT_OF_RANGE', 'SCHEMA_BAD_MAGIC', 'SUBJECT_INVALID_IP']);
      expect(dlq.records.find((r) => r.value!.reasonCode === 'SCHEMA_BAD_MAGIC')!.value!.value.toString()).toBe('not avro');
      // Counted once Kafka took the dead letter, which a reader may see first.
      await waitUntil(async () => (await aggregator.metric('banstream_aggregator_dlq_records_total')) >= 3, 'three dead letters counted');
      expect(await aggregator.metric('banstream_aggregator_dlq_records_total')).toBe(3);
    } finally {
      await dlq.stop();
    }
  });
});
