/**
 * A million bans on the bans topic, as the aggregator and the control API write them
 * (Avro, keyed by subject), for the console benchmark to load into control. Subjects
 * mix scopes as a busy deployment holds them: 80% addresses, 10% /24 networks, 10%
 * users; five policies, a tenth by hand. They started an hour ago, their records too (so
 * they are not the last minute's bans on the Overview), and hold for a day.
 */
import type { Kafka } from '@banstream/kafka';
import { loadSchemaCatalog, SCHEMA_NAMES, type Ban } from '@banstream/schemas';
import { note } from '../lib.js';

const POLICIES = ['login-flood', 'scraper', 'api-burst', 'credential-stuffing', 'signup-abuse'];
/** Records per produce request, and requests in flight: well below the broker's 1 MB per partition batch. */
const PER_SEND = 4_000;
const IN_FLIGHT = 4;

const dotted = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** The i-th subject: unique for every i below 2^24. */
export function benchSubject(i: number): string {
  if (i % 10 === 8) return `cidr:${dotted((0x0b000000 + i * 256) >>> 0)}/24`;
  if (i % 10 === 9) return `user:bench-${i}`;
  return `ip:${dotted((0x0a000000 + i) >>> 0)}`;
}

export function benchBan(i: number, now: number): Ban {
  const subject = benchSubject(i);
  const manual = i % 10 === 3;
  const policyId = manual ? 'manual' : POLICIES[i % POLICIES.length]!;
  return {
    banId: `bench-${i}`,
    subject,
    policyId,
    reason: manual ? 'seen in the web console bench' : `over the threshold of ${policyId}`,
    evidenceCount: manual ? 0 : 100 + (i % 900),
    windowSeconds: manual ? 0 : 60,
    startedAt: now - 3_600_000,
    expiresAt: now + 86_400_000,
    preview: false,
    escalationLevel: 0,
    origin: manual ? 'manual' : 'aggregator',
    httpStatus: 403,
    createdBy: manual ? 'bench' : null,
  };
}

/** Produces `count` bans to `topic`, encoding each batch just before its send; resolves with the time it took. */
export async function produceBans(kafka: Kafka, topic: string, count: number): Promise<{ ms: number; bytes: number }> {
  const codec = loadSchemaCatalog().codec(SCHEMA_NAMES.ban);
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const now = Date.now();
  // The Overview counts bans per minute by record time: these are an hour old, so they are not the last minute's.
  const recordTime = String(now - 3_600_000);
  const started = performance.now();
  let bytes = 0;
  let next = 0;
  try {
    const sender = async () => {
      while (next < count) {
        const from = next;
        const to = Math.min(count, from + PER_SEND);
        next = to;
        const messages: { key: string; value: Buffer; timestamp: string }[] = [];
        for (let i = from; i < to; i++) {
          const ban = benchBan(i, now);
          const value = codec.encode(ban);
          bytes += value.length;
          messages.push({ key: ban.subject, value, timestamp: recordTime });
        }
        await producer.send({ topic, acks: 1, messages });
        if (Math.floor(to / 100_000) > Math.floor(from / 100_000)) note(`bans produced: ${to}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
  } finally {
    await producer.disconnect();
  }
  return { ms: performance.now() - started, bytes };
}
