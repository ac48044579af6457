import { expect } from 'vitest';
import type { Admin, Producer } from '@banstream/kafka';
import type { Ban, RequestEvent, WindowCount } from '@banstream/schemas';
import { waitUntil } from './infra.js';
import { event, publishPolicy, type TopicTail } from './aggregator.js';

/** Traffic and exact recounts shared by the aggregator's scale-out tests. */

const COUNTRIES = ['FR', 'DE', 'US', 'BR', 'JP', 'IN', 'NG', 'AU'];
export const ATTACKERS = ['192.0.2.66', '198.18.7.66', '198.18.200.66', '203.0.113.66', '100.64.9.66'];

/** The aggregator settings of the scale-out tests: 12 partitions, every count published, quick ticks and failover. */
export function scaleOutEnv(kafkaBrokers: string, prefix: string) {
  return {
    KAFKA_BROKERS: kafkaBrokers,
    TOPIC_PREFIX: prefix,
    TOPIC_PARTITIONS: '12',
    AGGREGATOR_HOT_SHARE: '0',
    AGGREGATOR_SESSION_TIMEOUT_MS: '6000',
    AGGREGATOR_TICK_MS: '20',
    AGGREGATOR_GROUP_ID: `${prefix}aggregator`,
  };
}

/** Per ip (bans above 50 an hour), per user and per country: the dimensions expectExactResult checks. */
export async function publishCountingPolicies(producer: Producer, topic: string): Promise<void> {
  await publishPolicy(producer, topic, { id: 'per-ip', key: ['ip'], threshold: { count: 50, interval: '1h' }, action: { type: 'ban', banDuration: '10m' } });
  await publishPolicy(producer, topic, { id: 'per-user', key: ['user'], threshold: { count: 1_000_000, interval: '1h' }, action: { type: 'throttle' } });
  await publishPolicy(producer, topic, { id: 'per-country', key: ['country'], threshold: { count: 1_000_000, interval: '1h' }, action: { type: 'alert' } });
}

/** A seeded source of numbers, so a failure can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
}

/** Normal clients on many /24s (so on every partition), users and countries crossing them, and a few attackers. */
export function traffic(seed: number, atMs: number): RequestEvent[] {
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

export async function committedAll(admin: Admin, groupId: string, topic: string): Promise<boolean> {
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
 * Waits for the counts topic to hold the exact recount of `events` for every
 * dimension, and checks that every attacker, and only they, got one ban (one id,
 * one record however often it was published).
 */
export async function expectExactResult(counts: TopicTail<WindowCount>, bans: TopicTail<Ban>, events: readonly RequestEvent[]): Promise<void> {
  const expected = exactCounts(events);
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
}
