import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { topicFullName } from '@banstream/kafka';
import { SCHEMA_NAMES, type RequestEventBatch } from '@banstream/schemas';
import { stackDown, stackSettings, stackUp, type StackSettings } from '../scripts/stack/index.mjs';
import { catalog, TopicTail } from './support/aggregator.js';
import { captureLogger, waitUntil } from './support/infra.js';
import { postedEvent, startGateway, type Gateway } from './support/ingest.js';
import { testKafka } from './support/kafka.js';
import { ownStackEnv } from './support/own-stack.js';

const BATCH = 50;
const BUFFER_BYTES = 128 * 1024;

/** Posts one batch of new events; returns the answer and the ids it carried. */
async function postBatch(gateway: Gateway): Promise<{ status: number; ids: string[]; retryAfter: string | null; code?: string }> {
  const events = Array.from({ length: BATCH }, (_, i) => postedEvent(`198.51.${i % 5}.${i}`));
  const res = await gateway.post(JSON.stringify(events), 'application/json');
  const body = (await res.json()) as { code?: string };
  return { status: res.status, ids: events.map((e) => e.eventId!), retryAfter: res.headers.get('retry-after'), ...(body.code ? { code: body.code } : {}) };
}

// A broker of its own (own folder and ports), so stopping it harms no other test.
describe('the ingest gateway through a Kafka outage', () => {
  const dir = mkdtempSync(join(tmpdir(), 'banstream-ingest-outage-'));
  let settings: StackSettings | undefined;
  let gateway: Gateway | undefined;
  let tail: TopicTail<RequestEventBatch> | undefined;

  afterAll(async () => {
    gateway?.proc.child.kill('SIGKILL');
    await tail?.stop().catch(() => undefined);
    if (settings) await stackDown(settings);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After once its buffer is full, recovers by itself, and delivers every event it answered 202 for', async () => {
    settings = stackSettings(await ownStackEnv(dir));
    const { KAFKA_BROKERS } = await stackUp(settings, () => undefined);
    const prefix = 'outage.';
    gateway = await startGateway({
      KAFKA_BROKERS,
      TOPIC_PREFIX: prefix,
      TOPIC_PARTITIONS: '3',
      INGEST_BUFFER_BYTES: String(BUFFER_BYTES),
      KAFKA_REQUEST_TIMEOUT_MS: '2000',
      INGEST_ALLOW_ANONYMOUS_EDGES: 'true',
    });
    const accepted = new Set<string>();
    const refused = new Set<string>();
    // When each accepted event was taken, so a shortfall says which phase lost it.
    const phaseOf = new Map<string, string>();
    let phase = 'broker up';
    const record = (answer: Awaited<ReturnType<typeof postBatch>>) => {
      for (const id of answer.ids) (answer.status === 202 ? accepted : refused).add(id);
      if (answer.status === 202) for (const id of answer.ids) phaseOf.set(id, phase);
      return answer;
    };

    // Broker up: everything is taken.
    for (let i = 0; i < 5; i++) expect(record(await postBatch(gateway)).status).toBe(202);

    // Broker down: the gateway keeps taking events into its buffer, then pushes back.
    await stackDown(settings);
    phase = 'broker down';
    let answer = record(await postBatch(gateway));
    const acceptedBeforeDown = accepted.size;
    for (let i = 0; i < 200 && answer.status === 202; i++) answer = record(await postBatch(gateway));
    expect(answer).toMatchObject({ status: 503, code: 'BUFFER_FULL', retryAfter: '1' });
    expect(accepted.size).toBeGreaterThan(acceptedBeforeDown); // it did buffer during the outage
    const ready = (await (await fetch(`${gateway.url}/readyz`)).json()) as { checks: Record<string, boolean> };
    expect(ready.checks.buffer).toBe(false);
    // Still full a moment later: nothing was dropped to make room.
    expect(record(await postBatch(gateway)).status).toBe(503);
    expect(await gateway.metric('banstream_edge_events_dropped_total')).toBe(0);

    // Broker back: the gateway recovers without help.
    await stackUp(settings, () => undefined);
    phase = 'broker back';
    const recovered = await waitUntil(
      async () => {
        const a = record(await postBatch(gateway!));
        return a.status === 202 ? a : undefined;
      },
      'the gateway to answer 202 again',
      60_000,
      250,
    );
    expect(recovered.status).toBe(202);
    // Its backlog drains within moments; then it takes full batches again.
    await waitUntil(async () => (await gateway!.metric('banstream_edge_buffer_events')) === 0, 'the buffer to drain', 30_000, 100);
    for (let i = 0; i < 5; i++) expect(record(await postBatch(gateway)).status).toBe(202);

    // Every event answered 202 is on the topic, once; none answered 503 is.
    const read = async (label: string, timeoutMs: number) => {
      const log = captureLogger();
      const t = await new TopicTail(testKafka(KAFKA_BROKERS, log.logger), topicFullName(prefix, 'events'), (b) => catalog.codec(SCHEMA_NAMES.requestEventBatch).decode(b)).start();
      const ids = () => t.records.flatMap((r) => r.value?.events.map((e) => e.eventId) ?? []);
      // A group coordinator that has just restarted can take a while to serve a new group on a busy machine.
      const complete = await waitUntil(() => ids().length >= accepted.size, label, timeoutMs, 200).then(
        () => true,
        () => false,
      );
      return {
        tail: t,
        ids,
        complete,
        warnings: log
          .lines()
          .filter((l) => Number(l.level) >= 40)
          .map((l) => l.msg)
          .slice(-5),
      };
    };
    let reading = await read(`${accepted.size} accepted events on the topic`, 90_000);
    tail = reading.tail;
    if (!reading.complete) {
      // Tell a consumer that missed records from records missing on the broker: read again with a new group.
      const admin = testKafka(KAFKA_BROKERS, captureLogger().logger).admin();
      await admin.connect();
      const ends = await admin.fetchTopicOffsets(topicFullName(prefix, 'events'));
      await admin.disconnect();
      const stored = ends.map((e) => `p${e.partition} ${e.low}..${e.high}`).join(', ');
      const first = { seen: reading.ids().length, records: reading.tail.records.length, warnings: reading.warnings };
      await reading.tail.stop();
      reading = await read('a second reading', 60_000);
      tail = reading.tail;
      if (!reading.complete) {
        const delivered = await gateway!.metric('banstream_edge_events_delivered_total');
        const seen = new Set(reading.ids());
        const missing: Record<string, number> = {};
        for (const id of accepted) if (!seen.has(id)) missing[phaseOf.get(id)!] = (missing[phaseOf.get(id)!] ?? 0) + 1;
        throw new Error(
          `accepted ${accepted.size}, gateway delivered ${delivered}; offsets ${stored}; missing by phase ${JSON.stringify(missing)}; first reading ${JSON.stringify(first)}; second reading saw ${reading.ids().length} in ${reading.tail.records.length} records\ngateway log:\n${gateway!.proc.output().slice(-6000)}`,
        );
      }
    }
    const onTopic = reading.ids;
    await waitUntil(async () => (await gateway!.metric('banstream_edge_buffer_events')) === 0, 'the buffer to be empty');
    const ids = onTopic();
    expect(ids.length).toBe(accepted.size);
    expect(new Set(ids)).toEqual(accepted);
    expect(ids.some((id) => refused.has(id))).toBe(false);
    expect(await gateway.metric('banstream_edge_events_delivered_total')).toBe(accepted.size);
  }, 240_000);
});
