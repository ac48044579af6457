import { describe, expect, it, vi } from 'vitest';
import { Writable } from 'node:stream';
import { eventPartitionKey } from '@banstream/core';
import { createLogger } from '@banstream/platform';
import { loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { DROP_REASONS, type BufferStats } from './engine/event-buffer.js';
import { createEdgePublisher, type EdgePublisher } from './publisher.js';
import type { KeyedRecord, RecordSink } from './sink.js';
import type { EdgePublisherOptions } from './options.js';

const catalog = loadSchemaCatalog();
const batchCodec = catalog.codec(SCHEMA_NAMES.requestEventBatch);

/** A sink whose behaviour the test switches: acknowledge, hang (Kafka away), fail, refuse for good. */
class FakeSink implements RecordSink {
  readonly sent: KeyedRecord[] = [];
  /** The records of every call, acknowledged or not. */
  readonly attempts: (readonly KeyedRecord[])[] = [];
  mode: 'ok' | 'hang' | 'fail' | 'permanent' = 'ok';
  private readonly hanging: { resolve: () => void; reject: (e: Error) => void }[] = [];

  async send(records: readonly KeyedRecord[]): Promise<void> {
    this.attempts.push(records);
    if (this.mode === 'fail') throw new Error('connect ECONNREFUSED');
    if (this.mode === 'permanent') throw Object.assign(new Error('MESSAGE_TOO_LARGE'), { permanent: true });
    if (this.mode === 'hang') await new Promise<void>((resolve, reject) => this.hanging.push({ resolve, reject }));
    this.sent.push(...records);
  }

  release(): void {
    this.mode = 'ok';
    for (const h of this.hanging.splice(0)) h.resolve();
  }

  async close(): Promise<void> {
    for (const h of this.hanging.splice(0)) h.reject(new Error('producer disconnected'));
  }

  events(): RequestEvent[] {
    return this.sent.flatMap((r) => batchCodec.decode(r.value).events);
  }
}

function logCapture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ service: 'test', level: 'debug', destination }), lines };
}

let seq = 0;
function event(ip: string, extra: Partial<RequestEvent> = {}): RequestEvent {
  return requestEvent({ eventId: `e${++seq}`, ip, ...extra });
}

function publisherWith(sink: FakeSink, options: Partial<EdgePublisherOptions> = {}) {
  const { logger, lines } = logCapture();
  const publisher = createEdgePublisher({ sink, logger, catalog, lingerMs: 1, retryBackoffMs: 5, ...options });
  return { publisher, lines };
}

const droppedTotal = (s: BufferStats) => DROP_REASONS.reduce((n, r) => n + s.dropped[r], 0);
const accountedFor = (s: BufferStats) => s.delivered + droppedTotal(s) + s.pendingEvents + s.inFlightEvents;
const settled = (p: EdgePublisher) => vi.waitFor(() => expect(p.stats().pendingEvents + p.stats().inFlightEvents).toBe(0), { timeout: 5_000 });

describe('EdgePublisher', () => {
  it('delivers every event in records keyed by the client /24 or /48, at most maxEventsPerRecord each', async () => {
    const sink = new FakeSink();
    const { publisher } = publisherWith(sink, { maxEventsPerRecord: 3 });
    const ips = ['203.0.113.7', '203.0.113.200', '198.51.100.1', '2001:db8:1:2::1', '2001:db8:1:ffff::9', '203.0.113.8', '203.0.113.9'];
    for (const ip of ips) publisher.publish(event(ip));
    await settled(publisher);

    expect(publisher.stats()).toMatchObject({ published: 7, delivered: 7 });
    for (const record of sink.sent) {
      const events = batchCodec.decode(record.value).events;
      expect(events.length).toBeLessThanOrEqual(3);
      for (const e of events) expect(eventPartitionKey(e.ip)).toBe(record.key);
    }
    expect(new Set(sink.sent.map((r) => r.key))).toEqual(new Set(['203.0.113.0/24', '198.51.100.0/24', '2001:db8:1::/48']));
    expect(
      sink
        .events()
        .map((e) => e.ip)
        .sort(),
    ).toEqual([...ips].sort());
    await publisher.close();
  });

  it('writes U+FFFD in place of a lone surrogate, as the enforcer builds its subjects, alone or beside encoded events', async () => {
    const sink = new FakeSink();
    const { publisher } = publisherWith(sink);
    publisher.publish({ ...event('198.51.100.1'), userId: 'bot\ud800' });
    await settled(publisher);
    const eventType = catalog.latest(SCHEMA_NAMES.requestEvent).type;
    expect(publisher.offer([{ key: '198.51.100.0/24', body: eventType.toBuffer(event('198.51.100.2')) }])).toBe(true);
    publisher.publish({ ...event('198.51.100.3'), userId: `${'x'.repeat(70)}\udc00` });
    await settled(publisher);
    expect(sink.events().map((e) => e.userId)).toEqual(['bot\ufffd', event('198.51.100.2').userId, `${'x'.repeat(70)}\ufffd`]);
    await publisher.close();
  });

  it('sends events handed over already encoded, alone or with objects, as valid batch records', async () => {
    const sink = new FakeSink();
    const { publisher } = publisherWith(sink);
    const eventType = catalog.latest(SCHEMA_NAMES.requestEvent).type;
    const encoded = [event('198.51.100.1'), event('198.51.100.2')].map((e) => ({ key: eventPartitionKey(e.ip), body: eventType.toBuffer(e) }));
    expect(publisher.offer(encoded)).toBe(true);
    publisher.publish(event('198.51.100.3'));
    await settled(publisher);
    expect(publisher.stats().delivered).toBe(3);
    expect(
      sink
        .events()
        .map((e) => e.ip)
        .sort(),
    ).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.3']);
    expect(new Set(sink.sent.map((r) => r.key))).toEqual(new Set(['198.51.100.0/24']));
    await publisher.close();
  });

  it('while Kafka is away, buffers up to the budget, then drops the oldest with a counter and one log line', async () => {
    const sink = new FakeSink();
    sink.mode = 'hang';
    const budgetBytes = 20_000;
    const { publisher, lines } = publisherWith(sink, { budgetBytes, maxInFlight: 1 });
    const ids: string[] = [];
    let peak = 0;
    for (let i = 0; i < 400; i++) {
      const e = event(`10.0.${i % 4}.1`);
      ids.push(e.eventId);
      publisher.publish(e);
      const s = publisher.stats();
      peak = Math.max(peak, s.pendingBytes + s.inFlightBytes);
      expect(accountedFor(s)).toBe(s.published);
      if (i === 10) await vi.waitFor(() => expect(publisher.stats().inFlightEvents).toBeGreaterThan(0));
    }
    const during = publisher.stats();
    expect(peak).toBeLessThanOrEqual(budgetBytes);
    expect(during.dropped.buffer_full).toBeGreaterThan(0);
    const inFlight = during.inFlightEvents;

    sink.release();
    await settled(publisher);
    const after = publisher.stats();
    expect(after.delivered + after.dropped.buffer_full).toBe(400);
    // What reached Kafka: the first send (in flight when the outage began), then the newest events.
    const delivered = new Set(sink.events().map((e) => e.eventId));
    expect(delivered).toEqual(new Set([...ids.slice(0, inFlight), ...ids.slice(400 - (after.delivered - inFlight))]));
    const dropLines = lines.filter((l) => String(l.msg).startsWith('edge publisher dropped events'));
    expect(dropLines).toHaveLength(1);
    expect(dropLines[0]!.dropped).toEqual({ buffer_full: 1 });
    await publisher.close();
  });

  it('with a slow Kafka, keeps at most maxInFlight sends waiting and batches what arrives meanwhile into fewer, larger sends', async () => {
    let inFlight = 0;
    let peak = 0;
    let sends = 0;
    const slow = new FakeSink();
    const sink: RecordSink = {
      async send(records) {
        sends++;
        peak = Math.max(peak, ++inFlight);
        await new Promise((r) => setTimeout(r, 50));
        inFlight--;
        await slow.send(records);
      },
      close: () => slow.close(),
    };
    const { logger } = logCapture();
    const publisher = createEdgePublisher({ sink, logger, catalog, lingerMs: 1, maxInFlight: 2, maxEventsPerSend: 5_000 });
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 100; i++) publisher.publish(event(`10.${round}.0.${i}`));
      await new Promise((r) => setImmediate(r)); // the event loop turns between bursts, as between requests
    }
    await settled(publisher);
    expect(publisher.stats()).toMatchObject({ published: 2_000, delivered: 2_000, dropped: { buffer_full: 0 } });
    expect(peak).toBeLessThanOrEqual(2);
    expect(sends).toBeLessThanOrEqual(10); // 20 bursts, fewer sends: later ones carry what piled up
    expect(slow.events()).toHaveLength(2_000);
    await publisher.close();
  });

  it('keeps and retries events after a failed send, and drops them as rejected when Kafka refuses them for good', async () => {
    const sink = new FakeSink();
    sink.mode = 'fail';
    const { publisher, lines } = publisherWith(sink);
    for (let i = 0; i < 10; i++) publisher.publish(event('192.0.2.1'));
    await vi.waitFor(() => expect(lines.some((l) => l.msg === 'kafka send failed: events kept in the buffer and retried')).toBe(true));
    expect(publisher.stats().pendingEvents + publisher.stats().inFlightEvents).toBe(10);
    sink.mode = 'ok';
    await settled(publisher);
    expect(publisher.stats().delivered).toBe(10);

    sink.mode = 'permanent';
    for (let i = 0; i < 5; i++) publisher.publish(event('192.0.2.1'));
    await settled(publisher);
    expect(publisher.stats()).toMatchObject({ published: 15, delivered: 10, dropped: { rejected: 5 } });
    await publisher.close();
  });

  it('sends a failed send again exactly as it was, before newer events, even when more of its networks arrived meanwhile', async () => {
    // The idempotent producer gives the retry the failed send's sequence numbers; regrouped
    // records under them would be taken by the broker for duplicates of what it may hold.
    const sink = new FakeSink();
    sink.mode = 'fail';
    const { publisher, lines } = publisherWith(sink, { retryBackoffMs: 50 });
    for (let i = 0; i < 10; i++) publisher.publish(event(`192.0.2.${i}`));
    await vi.waitFor(() => expect(lines.some((l) => l.msg === 'kafka send failed: events kept in the buffer and retried')).toBe(true));
    for (let i = 0; i < 20; i++) publisher.publish(event(i % 2 ? `192.0.2.${i}` : `198.51.100.${i}`));
    sink.mode = 'ok';
    await settled(publisher);
    const failed = sink.attempts[0]!;
    const retries = sink.attempts.slice(1).filter((a) => a.length === failed.length && a.every((r, i) => r.key === failed[i]!.key && r.value.equals(failed[i]!.value)));
    expect(retries.length).toBeGreaterThan(0);
    // The first acknowledged send is the failed one, unchanged; the 20 newer events come after.
    expect(sink.sent.slice(0, failed.length)).toEqual(failed);
    expect(sink.events().map((e) => e.eventId)).toEqual([...new Set(sink.events().map((e) => e.eventId))]);
    expect(publisher.stats()).toMatchObject({ published: 30, delivered: 30 });
    await publisher.close();
  });

  it('refuses more than one send in flight with Kafka, whose idempotent producer could lose the second after a failure', () => {
    const { logger } = logCapture();
    expect(() => createEdgePublisher({ kafka: {} as never, topic: 'events', logger, maxInFlight: 2 })).toThrow(/maxInFlight must be 1 with Kafka/);
  });

  it('never throws into the caller: unusable events are dropped as invalid, late ones as closed', async () => {
    const sink = new FakeSink();
    const { publisher } = publisherWith(sink);
    expect(() => publisher.publish(null as unknown as RequestEvent)).not.toThrow();
    publisher.publish(event('not-an-ip'));
    publisher.publish(event('192.0.2.1', { status: 1.5 }));
    publisher.publish(event('192.0.2.1'));
    await settled(publisher);
    expect(publisher.stats()).toMatchObject({ published: 4, delivered: 1, dropped: { invalid: 3 } });
    await publisher.close();
    publisher.publish(event('192.0.2.1'));
    expect(publisher.stats().dropped.closed).toBe(1);
    expect(publisher.offer([event('192.0.2.1')])).toBe(false);
  });

  it('close() flushes what is buffered before resolving', async () => {
    const sink = new FakeSink();
    const { publisher } = publisherWith(sink, { lingerMs: 60_000 });
    for (let i = 0; i < 50; i++) publisher.publish(event('192.0.2.1'));
    const stats = await publisher.close(5_000);
    expect(stats).toMatchObject({ published: 50, delivered: 50, pendingEvents: 0, inFlightEvents: 0 });
    expect(sink.events()).toHaveLength(50);
  });

  it('close() gives up at its deadline when Kafka does not answer, counting the rest as shutdown', async () => {
    const sink = new FakeSink();
    sink.mode = 'hang';
    const { publisher, lines } = publisherWith(sink, { maxInFlight: 1, maxEventsPerSend: 10 });
    for (let i = 0; i < 30; i++) publisher.publish(event('192.0.2.1'));
    const started = Date.now();
    const stats = await publisher.close(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(stats).toMatchObject({ published: 30, delivered: 0, pendingEvents: 0, inFlightEvents: 0, dropped: { shutdown: 30 } });
    expect(lines.some((l) => l.level === 50 && l.dropped === 30)).toBe(true);
  });

  it('offer() takes a whole batch or nothing, so a caller can push back instead of losing accepted events', async () => {
    const sink = new FakeSink();
    sink.mode = 'hang';
    const { publisher } = publisherWith(sink, { budgetBytes: 10_000 });
    let accepted = 0;
    while (publisher.offer([event('192.0.2.1'), event('192.0.2.2')])) accepted += 2;
    expect(publisher.stats()).toMatchObject({ published: accepted, refused: 2 });
    expect(droppedTotal(publisher.stats())).toBe(0);
    expect(publisher.fill()).toBeGreaterThan(0.9);
    sink.release();
    await settled(publisher);
    expect(publisher.stats().delivered).toBe(accepted);
    await publisher.close();
  });

  it('reports its counts as Prometheus metrics', async () => {
    const sink = new FakeSink();
    const { publisher } = publisherWith(sink);
    for (let i = 0; i < 3; i++) publisher.publish(event('192.0.2.1'));
    await publisher.close();
    const text = await publisher.registry.metrics();
    expect(text).toContain('banstream_edge_events_published_total 3');
    expect(text).toContain('banstream_edge_events_delivered_total 3');
    expect(text).toContain('banstream_edge_events_dropped_total{reason="buffer_full"} 0');
    expect(text).toMatch(/banstream_edge_record_events_count \d/);
    expect(text).toMatch(/banstream_edge_produce_seconds_count \d/);
  });
});
