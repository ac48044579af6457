import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionTypes, type Producer } from '@banstream/kafka';
import { eventPartitionKey, keyPartition } from '@banstream/core';
import { withDeadline } from '@banstream/platform';
import { SCHEMA_NAMES, type Ban, type DlqRecord, type SubjectCountBatch, type WindowCount } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { catalog, decodeBan, decodeCount, event, publishEvents, publishPolicy, startAggregator, stopAggregators, TopicTail, type Aggregator } from './support/aggregator.js';

const FLOODER = '203.0.113.66';
/** The huge batch's address: counted, it would be banned at once. */
const HUGE = '203.0.113.200';
const BUDGET_MS = 300;
/** Events in the huge batch: well past a second of counting, so past the budget whatever the machine's load. */
const HUGE_EVENTS = 500_000;

/**
 * The attack record of issue 25: an event whose headers map is a block with count -1
 * and a negative byte size. Today's reader loops on it for ever (a stall); a fixed one
 * refuses it (a decode error): either way it must reach the DLQ and nothing else.
 */
function attackRecord(now: number): Buffer {
  const good = catalog.codec(SCHEMA_NAMES.requestEventBatch).encode({ events: [event('203.0.113.7', now, { eventId: '', headers: {}, edgeId: 'EDGEMARK' })] });
  // The empty headers map (one 0x00) lies just before edgeId's length (0x10) and bytes.
  const at = good.indexOf(Buffer.from('EDGEMARK')) - 2;
  expect(good[at]).toBe(0x00);
  return Buffer.concat([good.subarray(0, at), Buffer.from([0x01, 0x03]), good.subarray(at + 1)]);
}

/** Every probe of /readyz and /metrics got an HTTP answer within `boundMs` (a 503 while a worker is replaced is an answer). */
function probeHealth(a: Aggregator, boundMs = 6_000) {
  const failures: string[] = [];
  let answered = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const path of ['/readyz', '/metrics']) {
        const started = performance.now();
        try {
          const response = await fetch(`http://127.0.0.1:${a.port}${path}`, { signal: AbortSignal.timeout(boundMs) });
          await response.text();
          answered++;
        } catch (error) {
          failures.push(`${path} after ${Math.round(performance.now() - started)} ms: ${String(error)}`);
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { answered, failures };
    },
  };
}

async function sendCompressed(producer: Producer, topic: string, messages: { key: string; value: Buffer }[], partition?: number): Promise<void> {
  await withDeadline(
    producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: messages.map((m) => ({ ...m, ...(partition === undefined ? {} : { partition }) })) }),
    30_000,
    `producing to ${topic}`,
  );
}

/**
 * Hostile records planted between normal traffic, against the aggregator as its real
 * process: the attack record, an unknown schema fingerprint, garbage (4 MiB
 * once decompressed: more than the DLQ topic takes), a repartition record that makes
 * stage two throw, and a well-formed batch of half a million events that runs past a
 * lowered record budget.
 * Each reaches the DLQ with its reason, what follows is counted, the flood behind
 * them is banned, the ops routes answer throughout, and the stalled worker is replaced
 * and not trapped again, nor after a restart.
 */
describe('no record stops a partition', () => {
  const { kafkaBrokers } = testInfra();
  let broker: TestBroker | undefined;
  let stateDir: string;
  const running: Aggregator[] = [];
  const env = () => ({
    ...broker!.env,
    AGGREGATOR_GROUP_ID: `${broker!.topics.prefix}aggregator`,
    AGGREGATOR_HOT_SHARE: '0',
    AGGREGATOR_TICK_MS: '20',
    AGGREGATOR_SESSION_TIMEOUT_MS: '6000',
    AGGREGATOR_RECORD_BUDGET_MS: String(BUDGET_MS),
    AGGREGATOR_STATE_DIR: stateDir,
    LOG_LEVEL: 'info',
  });

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    stateDir = mkdtempSync(join(tmpdir(), 'stall-state-'));
    const policies = broker.topics.name('policies');
    await publishPolicy(broker.producer, policies, { id: 'flood', key: ['ip'], threshold: { count: 50, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } });
    await publishPolicy(broker.producer, policies, { id: 'per-user', key: ['user'], threshold: { count: 1_000_000, interval: '1h' }, action: { type: 'throttle' } });
  }, 60_000);

  afterAll(async () => {
    await stopAggregators(running, 20_000);
    await broker?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('dead-letters each planted record with its reason, counts what follows, bans the flood, and keeps answering', async () => {
    const { kafka, producer, topics, admin } = broker!;
    const events = topics.name('events');
    const dlq = await new TopicTail<DlqRecord>(kafka, topics.name('dlq'), (b) => catalog.codec(SCHEMA_NAMES.dlqRecord).decode(b)).start();
    const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
    const counts = await new TopicTail<WindowCount>(kafka, topics.name('counts'), decodeCount).start();
    let a = await startAggregator(env());
    running.push(a);
    let probe = probeHealth(a);
    try {
      const now = Date.now();
      const key = eventPartitionKey(FLOODER);
      const partition = keyPartition(key, 3);

      // Stage two: a repartition record whose first entry cannot be counted (a negative count), before the entries of user u-after.
      const subjectsPartition = keyPartition('user:u-after', 3);
      const bad: SubjectCountBatch = {
        sourcePartition: 999,
        entries: [
          { offset: 1, policyId: 'per-user', subject: 'user:u-bad', timestamp: now, count: -5, seq: 0 },
          { offset: 1, policyId: 'per-user', subject: 'user:u-good', timestamp: now, count: 3, seq: 1 },
        ],
      };
      await producer.send({
        topic: topics.name('aggregator-subjects'),
        acks: -1,
        messages: [{ key: 'p999', value: catalog.codec(SCHEMA_NAMES.subjectCountBatch).encode(bad), partition: subjectsPartition }],
      });

      // Stage one, all on the flooder's partition: normal traffic, then the planted records, then more traffic and the flood.
      await publishEvents(
        producer,
        events,
        Array.from({ length: 20 }, (_, i) => event('203.0.113.10', now - 100 + i)),
      );
      const firstPlanted = await admin.fetchTopicOffsets(events);
      const next = () => BigInt(firstPlanted.find((o) => o.partition === partition)!.high);
      const attack = attackRecord(now);
      await produceOrFail(producer, events, [{ key, value: attack }]);
      const unknownFingerprint = Buffer.concat([Buffer.from([0xc3, 0x01]), randomBytes(8), Buffer.from('body')]);
      await produceOrFail(producer, events, [{ key, value: unknownFingerprint }]);
      const garbage = Buffer.alloc(4 << 20, 'garbage!');
      await sendCompressed(producer, events, [{ key, value: garbage }]);
      const huge = catalog.codec(SCHEMA_NAMES.requestEventBatch).encode({ events: Array.from({ length: HUGE_EVENTS }, () => event(HUGE, now, { eventId: '' })) });
      expect(gzipSync(huge).length).toBeLessThan(1 << 20);
      await sendCompressed(producer, events, [{ key, value: huge }]);
      await publishEvents(
        producer,
        events,
        Array.from({ length: 30 }, (_, i) => event('203.0.113.20', now + i, { userId: 'u-after' })),
      );
      await publishEvents(
        producer,
        events,
        Array.from({ length: 120 }, (_, i) => event(FLOODER, now + i)),
        20,
      );

      const ban = await waitUntil(
        () => bans.latest().get(`ip:${FLOODER}`),
        () => `the flood banned\n${a.proc.output()}`,
        90_000,
        100,
      );
      expect(ban).toMatchObject({ policyId: 'flood', origin: 'aggregator' });
      const countOf = (k: string) => counts.latest().get(k)?.count;
      await waitUntil(() => countOf('flood|ip:203.0.113.10') === 20 && countOf('flood|ip:203.0.113.20') === 30, 'the traffic before and after the planted records counted', 30_000);
      await waitUntil(() => countOf('per-user|user:u-after') === 30 && countOf('per-user|user:u-good') === 3, 'the users after the bad entry counted, and the good entry beside it', 30_000);

      // Dead letters are written before the offsets are committed: a worker killed in between
      // (here by a stall elsewhere) leaves its last batch's letters to be written again.
      // So: at least one letter per planted record, every one with that record's reason.
      const letters = () => dlq.records.map((r) => r.value!);
      const atOffset = (topic: string, p: number, offset: bigint) => letters().filter((l) => l.originalTopic === topic && l.partition === p && l.offset === Number(offset));
      const planted = () => [next(), next() + 1n, next() + 2n, next() + 3n].map((o) => atOffset(events, partition, o)).concat([atOffset(topics.name('aggregator-subjects'), subjectsPartition, 0n)]);
      await waitUntil(
        () => planted().every((l) => l.length > 0),
        () => `a dead letter for each planted record, got ${JSON.stringify(letters().map((l) => [l.originalTopic, l.offset, l.reasonCode]))}`,
        30_000,
      );
      const [attacked, fingerprinted, garbled, stalled, thrown] = planted();
      const only = (list: DlqRecord[]) => {
        for (const l of list) expect({ ...l, at: 0 }).toEqual({ ...list[0]!, at: 0 });
        return list[0]!;
      };
      expect(only(attacked!)).toMatchObject({ value: attack });
      expect(only(attacked!).reasonCode).toMatch(/^(RECORD_STALLED|SCHEMA_[A-Z_]+)$/);
      const attackStalled = only(attacked!).reasonCode === 'RECORD_STALLED';
      expect(only(fingerprinted!)).toMatchObject({ reasonCode: 'SCHEMA_UNKNOWN_FINGERPRINT', value: unknownFingerprint });
      expect(only(garbled!)).toMatchObject({ reasonCode: 'SCHEMA_BAD_MAGIC', value: garbage.subarray(0, 512 * 1024) });
      expect(only(garbled!).reasonMessage).toContain('value cut to its first 524288 of 4194304 bytes');
      expect(only(stalled!)).toMatchObject({ reasonCode: 'RECORD_STALLED', value: huge.subarray(0, 512 * 1024) });
      expect(only(stalled!).reasonMessage).toMatch(/had this record in hand for \d+ ms \(budget 300 ms\) and was killed; dead-lettered unhandled/);
      expect(only(thrown!)).toMatchObject({ reasonCode: 'WINDOW_INVALID_ARGUMENT' });
      expect(catalog.codec(SCHEMA_NAMES.subjectCountBatch).decode(only(thrown!).value).entries).toEqual([bad.entries[0]]);
      expect(only(thrown!).reasonMessage).toMatch(/^entries\[0\]: count must be a whole number/);
      // Nothing else was dead-lettered: none of the normal traffic.
      const letterCount = letters().length;
      expect(letterCount).toBe(planted().flat().length);
      // The stalled batch was never counted: its address, 500,000 times over the threshold, is not banned.
      expect(bans.latest().has(`ip:${HUGE}`)).toBe(false);

      // One worker replaced per stall, and not trapped again.
      const stalls = attackStalled ? 2 : 1;
      expect(await a.metric('banstream_worker_stalls_total', 'kind="record"')).toBe(stalls);
      expect(await a.metric('banstream_worker_replacements_total')).toBe(stalls);
      expect(await a.metric('banstream_aggregator_quarantined_records_total', 'stage="events"')).toBeGreaterThanOrEqual(1);
      await waitUntil(
        () => a.proc.output().includes('record in hand past its time budget: quarantined; killing this process'),
        () => `the log line record in hand past its time budget: quarantined; killing this process; the process said:\n${a.proc.output()}`,
        10_000,
      );
      await waitUntil(
        () => a.proc.output().includes('worker stalled on a record: its watchdog killed it'),
        () => `the log line worker stalled on a record: its watchdog killed it; the process said:\n${a.proc.output()}`,
        10_000,
      );
      let health = await probe.stop();
      expect(health.failures).toEqual([]);
      expect(health.answered).toBeGreaterThan(20);

      // Restarted, it replays the stalled record's partition: skipped quietly, no second stall, no second dead letter.
      await stopAggregators([a], 20_000);
      running.length = 0;
      a = await startAggregator(env());
      running.push(a);
      probe = probeHealth(a);
      await publishEvents(
        producer,
        events,
        Array.from({ length: 25 }, (_, i) => event('203.0.113.21', Date.now() + i)),
      );
      await waitUntil(() => countOf('flood|ip:203.0.113.21') === 25, 'traffic after the restart counted', 60_000);
      expect(await a.metric('banstream_aggregator_quarantined_records_total', 'stage="events"')).toBeGreaterThanOrEqual(1);
      expect(await a.metric('banstream_worker_stalls_total')).toBe(0);
      expect(await a.metric('banstream_worker_replacements_total')).toBe(0);
      // The restart's replay dead-lettered nothing again.
      expect(letters()).toHaveLength(letterCount);
      health = await probe.stop();
      expect(health.failures).toEqual([]);
    } finally {
      await probe.stop();
      await Promise.all([dlq.stop(), bans.stop(), counts.stop()]);
    }
  }, 240_000);
});
