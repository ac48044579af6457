import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { Ban, RequestEvent, WindowCount } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { exitWithin } from './support/processes.js';
import {
  decodeBan, decodeCount, event, publishEvents, publishPolicy, startAggregator, TopicTail, type Aggregator,
} from './support/aggregator.js';

const COUNTRIES = ['FR', 'DE', 'US', 'BR', 'JP', 'IN', 'NG', 'AU'];
const ATTACKERS = ['192.0.2.66', '198.18.7.66', '198.18.200.66', '203.0.113.66', '100.64.9.66'];

/** A seeded source of numbers, so a failure can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32);
}

/** Normal clients on many /24s (so on every partition), users and countries crossing them, and a few attackers. */
function traffic(seed: number, atMs: number): RequestEvent[] {
  const random = prng(seed);
  const out: RequestEvent[] = [];
  for (let c = 0; c < 400; c++) {
    const ip = `10.${c % 7}.${Math.floor(c / 4)}.${c % 4}`;
    const country = COUNTRIES[c % COUNTRIES.length]!;
    for (let n = 1 + Math.floor(random() * 20); n > 0; n--) {
      const userId = random() < 0.7 ? `u${Math.floor(random() * 100)}` : null;
      out.push(event(ip, atMs - Math.floor(random() * 2000), { country, userId }));
    }
  }
  for (const ip of ATTACKERS) for (let n = 0; n < 40; n++) out.push(event(ip, atMs - Math.floor(random() * 2000), { country: 'US' }));
  return out.sort((a, b) => a.timestamp - b.timestamp);
}

async function committedAll(admin: Admin, groupId: string, topic: string): Promise<boolean> {
  const [ends, [committed]] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
  return ends.every((e) => e.high === '0' || committed!.partitions.find((p) => p.partition === e.partition)?.offset === e.high);
}

function exactCounts(events: readonly RequestEvent[]): Map<string, number> {
  const counts = new Map<string, number>();
  const bump = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const e of events) {
    bump(`per-ip|ip:${e.ip}`);
    if (e.userId) bump(`per-user|user:${e.userId}`);
    bump(`per-country|country:${e.country}`);
  }
  return counts;
}

/**
 * Two aggregators share a 12-partition events topic; one is killed with SIGKILL
 * mid-stream. Counts of every dimension, including those that are not the events'
 * partition key (user, country), must still equal an exact recount, and no subject
 * may get two different bans.
 */
describe('aggregator scale-out and recovery', () => {
  const { kafkaBrokers } = testInfra();
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let topics: TestBroker['topics'];
  let broker: TestBroker | undefined;
  const running: Aggregator[] = [];

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 12);
    ({ kafka, admin, producer, topics } = broker);
    const policies = topics.name('policies');
    await publishPolicy(producer, policies, { id: 'per-ip', key: ['ip'], threshold: { count: 50, interval: '1h' }, action: { type: 'ban', banDuration: '10m' } });
    await publishPolicy(producer, policies, { id: 'per-user', key: ['user'], threshold: { count: 1_000_000, interval: '1h' }, action: { type: 'throttle' } });
    await publishPolicy(producer, policies, { id: 'per-country', key: ['country'], threshold: { count: 1_000_000, interval: '1h' }, action: { type: 'alert' } });
  }, 60_000);

  afterAll(async () => {
    for (const a of running) {
      a.proc.child.kill('SIGTERM');
      await exitWithin(a.proc, 15_000).catch(() => a.proc.child.kill('SIGKILL'));
    }
    await broker?.close();
  });

  it('counts every dimension exactly and bans each attacker once, across a kill -9', async () => {
    const env = {
      KAFKA_BROKERS: kafkaBrokers, TOPIC_PREFIX: topics.prefix, TOPIC_PARTITIONS: '12', AGGREGATOR_HOT_SHARE: '0',
      AGGREGATOR_SESSION_TIMEOUT_MS: '6000', AGGREGATOR_TICK_MS: '20', AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator`,
    };
    const [a, b] = await Promise.all([startAggregator(env), startAggregator(env)]);
    running.push(a!, b!);
    const counts = await new TopicTail<WindowCount>(kafka, topics.name('counts'), decodeCount).start();
    const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
    try {
      const first = traffic(1, Date.now());
      await publishEvents(producer, topics.name('events'), first, 50);
      // Both instances have counted and committed the first half: what the killed one
      // knew must come back from a replay, not from re-reading uncommitted input.
      await waitUntil(async () => (await b!.metric('banstream_aggregator_events_consumed_total')) > 0, 'the second instance to count events', 30_000);
      await waitUntil(() => committedAll(admin, env.AGGREGATOR_GROUP_ID, topics.name('events')), 'the first half committed', 30_000);
      await waitUntil(() => committedAll(admin, `${env.AGGREGATOR_GROUP_ID}.subjects`, topics.name('aggregator-subjects')), 'its repartition committed', 30_000);
      b!.proc.child.kill('SIGKILL');
      await b!.proc.exited;
      const second = traffic(2, Date.now());
      await publishEvents(producer, topics.name('events'), second, 50);

      const expected = exactCounts([...first, ...second]);
      const mismatches = () => {
        const latest = counts.latest();
        return [...expected].filter(([key, n]) => latest.get(key)?.count !== n).map(([key, n]) => `${key}: ${latest.get(key)?.count} != ${n}`);
      };
      await waitUntil(() => mismatches().length === 0, 'counts equal to the exact recount', 90_000, 200).catch((error: Error) => {
        throw new Error(`${error.message}\nfirst mismatches: ${mismatches().slice(0, 10).join('; ')}`);
      });
      expect(mismatches()).toEqual([]);
      expect(counts.latest().get('per-user|user:u1')?.kind).toBe('subject');

      const banned = () => new Set(bans.records.filter((r) => r.value).map((r) => r.key));
      await waitUntil(() => ATTACKERS.every((ip) => banned().has(`ip:${ip}`)), 'every attacker banned', 30_000);
      expect([...banned()].sort()).toEqual(ATTACKERS.map((ip) => `ip:${ip}`).sort());
      for (const ip of ATTACKERS) {
        const records = bans.records.filter((r) => r.key === `ip:${ip}`);
        expect(new Set(records.map((r) => r.value?.banId)).size, `ban ids of ${ip}`).toBe(1);
        // Re-publishing the same ban is harmless only if it is the very same record.
        expect(new Set(records.map((r) => JSON.stringify(r.value))).size).toBe(1);
      }
    } finally {
      await counts.stop();
      await bans.stop();
    }
  }, 180_000);
});
