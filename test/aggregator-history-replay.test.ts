import { afterAll, describe, expect, it } from 'vitest';
import { banId } from '@banstream/core';
import { SCHEMA_NAMES, type Ban, type BanHistoryEntry } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { catalog, decodeBan, event, publishEvents, publishPolicy, startAggregator, stopAggregators, TopicTail, type Aggregator } from './support/aggregator.js';

/**
 * A ban's history record goes in the ban's send (publisher.ts). Should the send fail on
 * the history's partition only and the aggregator then crash, the ban is on the bans
 * topic, its history record nowhere, and the events behind them not committed: the
 * aggregator that takes over replays the crossing and sends the history again
 * (decider.ts), without a second ban. An expiry's history record is published before
 * its tombstone (ban-expiry.ts), so a crash between them leaves the ended ban to lift
 * again. The second test uses the first one's aggregator.
 */
/** The ban the 'burst' policy makes of `subject` crossing at `startedAt`. */
function plantedBan(subject: string, startedAt: number): Ban {
  return {
    banId: banId('burst', subject, startedAt),
    subject,
    policyId: 'burst',
    reason: '21 requests in 1m exceed the ban threshold of 20',
    evidenceCount: 21,
    windowSeconds: 60,
    startedAt,
    expiresAt: startedAt + 3_600_000,
    preview: false,
    escalationLevel: 0,
    origin: 'aggregator',
    httpStatus: 403,
    createdBy: null,
    evidence: null,
  };
}

describe('aggregator: a ban whose history record was never written', () => {
  const { kafkaBrokers } = testInfra();
  let broker: TestBroker | undefined;
  const running: Aggregator[] = [];
  const tails: TopicTail<unknown>[] = [];

  afterAll(async () => {
    await stopAggregators(running, 15_000);
    for (const t of tails) await t.stop();
    await broker?.close();
  });

  it('sends the history again when the next aggregator replays the crossing, and bans once', async () => {
    broker = await connectTestBroker(kafkaBrokers, 1);
    const { producer, topics, kafka } = broker;
    const subject = 'ip:203.0.113.31';
    await publishPolicy(producer, topics.name('policies'), { id: 'burst', key: ['ip'], threshold: { count: 20, interval: '1m' }, action: { type: 'ban', banDuration: '1h', status: 403 } });
    // What the crashed aggregator left: its ban of the flood's 21st event on the bans
    // topic, no history record, and the flood not committed (the next one's group is new).
    const now = Date.now();
    const flood = Array.from({ length: 60 }, (_, i) => event('203.0.113.31', now - 60 + i));
    const startedAt = flood[20]!.timestamp;
    const ban = plantedBan(subject, startedAt);
    await produceOrFail(producer, topics.name('bans'), [{ key: subject, value: catalog.codec(SCHEMA_NAMES.ban).encode(ban) }]);
    await publishEvents(producer, topics.name('events'), flood);
    const bans = await new TopicTail(kafka, topics.name('bans'), decodeBan).start();
    const history = await new TopicTail(kafka, topics.name('ban-history'), (b): BanHistoryEntry => catalog.codec(SCHEMA_NAMES.banHistory).decode(b)).start();
    tails.push(bans, history);

    const aggregator = await startAggregator({ ...broker.env, AGGREGATOR_TICK_MS: '20', AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator` });
    running.push(aggregator);
    const entries = await waitUntil(() => {
      const e = history.records.filter((r) => r.key === subject);
      return e.length > 0 ? e : undefined;
    }, 'the history record sent again');
    expect(entries.map((e) => e.value)).toEqual([{ subject, action: 'ban', at: startedAt, actor: null, ban }]);
    // Every event read, and still the one ban and one history record: nothing decided again.
    await waitUntil(async () => (await aggregator.metric('banstream_aggregator_events_consumed_total')) >= 60, 'the flood read');
    await waitUntil(() => bans.records.some((r) => r.key === subject), 'the bans topic read');
    expect(bans.records.filter((r) => r.key === subject).map((r) => r.value)).toEqual([ban]);
    expect(history.records.filter((r) => r.key === subject)).toHaveLength(1);
  }, 120_000);
  it("lifts a ban whose expiry's history record was written but not its tombstone, and the record sent again is the same", async () => {
    // What an aggregator that died between an expiry's two sends (ban-expiry.ts) left: the
    // ended ban still on the bans topic, its "expire" record on the history topic.
    expect(running).toHaveLength(1); // the first test's aggregator, which owns the one partition
    const { producer, topics } = broker!;
    const subject = 'ip:203.0.113.32';
    const startedAt = Date.now() - 120_000;
    const ended: Ban = { ...plantedBan(subject, startedAt), expiresAt: startedAt + 60_000 };
    const expiry = { subject, action: 'expire' as const, at: ended.expiresAt, actor: null, ban: ended };
    await produceOrFail(producer, topics.name('ban-history'), [{ key: subject, value: catalog.codec(SCHEMA_NAMES.banHistory).encode(expiry) }]);
    await produceOrFail(producer, topics.name('bans'), [{ key: subject, value: catalog.codec(SCHEMA_NAMES.ban).encode(ended) }]);
    const [bans, history] = tails as unknown as [TopicTail<Ban>, TopicTail<BanHistoryEntry>];
    await waitUntil(() => bans.records.some((r) => r.key === subject && r.value === null), 'the tombstone');
    // The ended ban lifted again: its history record once more, the same (the order of the two sends: ban-expiry.test.ts).
    const records = await waitUntil(() => {
      const r = history.records.filter((e) => e.key === subject);
      return r.length >= 2 ? r : undefined;
    }, 'the expiry record sent again');
    expect(records.map((r) => r.value)).toEqual([expiry, expiry]);
  }, 60_000);
});
