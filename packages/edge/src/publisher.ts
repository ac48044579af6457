import { costProblem, eventPartitionKey, tryParseIp } from '@banstream/core';
import { installKafkaPatches } from '@banstream/kafka';
import { Registry, type Logger } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES, SINGLE_OBJECT_HEADER_LENGTH, SINGLE_OBJECT_MAGIC, type RequestEvent } from '@banstream/schemas';
import { DropLog } from './engine/drop-log.js';
import { EventBuffer, type BufferStats, type DropReason, type Pending } from './engine/event-buffer.js';
import { estimateEventBytes } from './engine/event-size.js';
import { concatBatch, encodedTimestamp, estimateBytes, isEncoded, type BufferedEvent } from './engine/encoded.js';
import { encodeGroups, groupByKey, type EncodedRecord } from './engine/records.js';
import { wellFormedEvent } from './engine/well-formed.js';
import { createKafkaSink } from './kafka-sink.js';
import { edgeMetrics, type EdgeMetrics } from './metrics.js';
import { resolveOptions, type EdgePublisherOptions, type ResolvedOptions } from './options.js';
import { isPermanentFailure, type KeyedRecord, type RecordSink } from './sink.js';

export interface EdgePublisher {
  /**
   * Buffers one event for Kafka and returns at once. Never throws and never waits:
   * an event it cannot keep is dropped and counted (see `stats().dropped`).
   */
  publish(event: RequestEvent): void;
  /**
   * Buffers every event, or none when they do not all fit in the room left (false):
   * for callers that can push back instead of losing events already accepted.
   * Events may come already encoded (a gateway that received Avro).
   */
  offer(events: readonly BufferedEvent[]): boolean;
  /** Share of the budget in use, 0 to 1. */
  fill(): number;
  stats(): BufferStats;
  /**
   * Sends what is buffered and waits for the acknowledgements, at most `timeoutMs`;
   * what is left then is dropped as `shutdown`. Later events are dropped as `closed`.
   */
  close(timeoutMs?: number): Promise<BufferStats>;
  readonly registry: Registry;
}

interface ActiveSend {
  items: Pending<BufferedEvent>[];
  /** Set when close() gave up on it, so its late outcome is not counted twice. */
  abandoned: boolean;
}

/** Events taken from the buffer and the records that carry them. */
interface PreparedSend {
  items: Pending<BufferedEvent>[];
  records: KeyedRecord[];
  eventsPerRecord: number[];
}

const METRICS_SYNC_MS = 1_000;

export function createEdgePublisher(options: EdgePublisherOptions): EdgePublisher {
  if (options.patchKafkajs === true) installKafkaPatches();
  return new Publisher(options);
}

/**
 * The publisher's moving parts around the pure EventBuffer: when to send (size or
 * linger), how many sends at once, what a failed send means for its events, and an
 * orderly close. Runs on the caller's event loop; publish() only appends.
 */
class Publisher implements EdgePublisher {
  readonly registry: Registry;
  private readonly config: ResolvedOptions;
  private readonly buffer: EventBuffer<BufferedEvent>;
  private readonly sink: RecordSink;
  private readonly logger: Logger;
  private readonly metrics: EdgeMetrics;
  private readonly dropLog: DropLog;
  private readonly now: () => number;
  private readonly encodeBatch: (events: BufferedEvent[]) => Buffer;
  private readonly isValidEvent: (event: BufferedEvent) => boolean;
  private readonly active = new Set<ActiveSend>();
  /**
   * Sends that failed, oldest first, to repeat before any new one; their events stay
   * in flight meanwhile. A failed send may have been written all the same (the broker
   * wrote it, the answer was lost), so it goes again exactly as it was: the idempotent
   * producer gives the retry the failed send's sequence numbers, and the broker takes
   * a batch with sequence numbers it knows for a duplicate of what it holds. Events
   * regrouped under those numbers would be acknowledged and never written.
   */
  private readonly failedSends: PreparedSend[] = [];
  private state: 'open' | 'closing' | 'closed' = 'open';
  private flushQueued = false;
  private lingerTimer: NodeJS.Timeout | undefined;
  private retryAt = 0;
  private lastFailureLogAt = Number.NEGATIVE_INFINITY;
  private readonly syncTimer: NodeJS.Timeout;
  private onSettled: (() => void) | undefined;
  private closing: Promise<BufferStats> | undefined;

  constructor(options: EdgePublisherOptions) {
    this.config = resolveOptions(options);
    this.logger = options.logger.child({ component: 'edge-publisher' });
    this.registry = options.registry ?? new Registry();
    this.metrics = edgeMetrics(this.registry);
    this.buffer = new EventBuffer(this.config.budgetBytes);
    this.dropLog = new DropLog(this.config.dropLogIntervalMs);
    this.now = options.now ?? (() => performance.now());
    const catalog = options.catalog ?? loadSchemaCatalog();
    const batchCodec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
    const eventType = catalog.latest(SCHEMA_NAMES.requestEvent).type;
    const header = Buffer.alloc(SINGLE_OBJECT_HEADER_LENGTH);
    header.set(SINGLE_OBJECT_MAGIC);
    header.writeBigUInt64LE(batchCodec.fingerprint, 2);
    const bodyOf = (event: BufferedEvent): Uint8Array => {
      if (isEncoded(event)) return event.body;
      if (!eventType.isValid(event) || !costInRange(event)) throw new TypeError('not a RequestEvent');
      return eventType.toBuffer(wellFormedEvent(event));
    };
    const batchType = catalog.latest(SCHEMA_NAMES.requestEventBatch).type;
    // Objects only (edges): checked once, then avsc writes the batch. Any encoded event: bodies are concatenated.
    this.encodeBatch = (events) => {
      if (events.some(isEncoded)) return concatBatch(header, events.map(bodyOf));
      if (!batchType.isValid({ events }) || !events.every(costInRange)) throw new TypeError('not a batch of RequestEvent');
      return Buffer.concat([header, batchType.toBuffer({ events: (events as RequestEvent[]).map(wellFormedEvent) })]);
    };
    this.isValidEvent = (event) => isEncoded(event) || (eventType.isValid(event) && costInRange(event));
    this.sink = options.sink ?? createKafkaSink({ kafka: options.kafka!, topic: options.topic!, logger: this.logger, reconnectMs: this.config.retryBackoffMs });
    this.syncTimer = setInterval(() => this.sync(), METRICS_SYNC_MS).unref();
    this.sync();
  }

  publish(event: RequestEvent): void {
    try {
      if (this.state !== 'open') return this.noteDrop('closed', 1, () => this.buffer.reject('closed'));
      const evicted = this.buffer.push(event, estimateEventBytes(event));
      if (evicted > 0) this.noteDrop('buffer_full', evicted);
      this.scheduleFlush();
    } catch (error) {
      // Only a malformed event (not an object) gets here; the caller must not see it.
      this.noteDrop('invalid', 1, () => this.buffer.reject('invalid'));
      this.logger.debug({ err: error }, 'unusable event dropped');
    }
  }

  offer(events: readonly BufferedEvent[]): boolean {
    if (this.state !== 'open') return false;
    const sizes = events.map(estimateBytes);
    if (!this.buffer.offer(events, sizes)) return false;
    this.scheduleFlush();
    return true;
  }

  fill(): number {
    return this.buffer.usedBytes / this.buffer.budgetBytes;
  }

  stats(): BufferStats {
    return this.buffer.stats();
  }

  close(timeoutMs = 5_000): Promise<BufferStats> {
    this.closing ??= this.shutdown(timeoutMs);
    return this.closing;
  }

  private async shutdown(timeoutMs: number): Promise<BufferStats> {
    this.state = 'closing';
    const deadline = this.now() + timeoutMs;
    this.retryAt = 0;
    this.flushNow();
    while (this.buffer.pendingEvents + this.active.size + this.failedSends.length > 0 && this.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.onSettled = resolve;
        setTimeout(resolve, Math.max(1, Math.min(50, deadline - this.now())));
      });
      this.flushNow();
    }
    this.state = 'closed';
    const left = this.buffer.pendingEvents + this.buffer.inFlightEvents;
    this.buffer.dropPending('shutdown');
    for (const send of this.active) {
      send.abandoned = true;
      this.buffer.settle(send.items, 'shutdown');
    }
    this.active.clear();
    for (const failed of this.failedSends.splice(0)) this.buffer.settle(failed.items, 'shutdown');
    clearTimeout(this.lingerTimer);
    clearInterval(this.syncTimer);
    await this.sink.close().catch((error: unknown) => this.logger.warn({ err: error }, 'closing the Kafka producer failed'));
    const stats = this.buffer.stats();
    this.metrics.sync(stats);
    if (left > 0) this.logger.error({ dropped: left, timeoutMs }, 'closed before every event was acknowledged: the rest is dropped as shutdown');
    else this.logger.info({ delivered: stats.delivered }, 'edge publisher closed: every buffered event was acknowledged');
    return stats;
  }

  /**
   * Sends at once when a send's worth is buffered (or on close), else after the
   * linger; never while every send slot is taken (the next settled send calls
   * again) or before the back-off after a failure has passed.
   */
  private scheduleFlush(): void {
    if (this.flushQueued || this.state === 'closed' || this.active.size >= this.config.maxInFlight) return;
    const b = this.buffer;
    if (b.pendingEvents === 0 && this.failedSends.length === 0) return;
    const wait = this.retryAt === 0 ? 0 : this.retryAt - this.now();
    const full = this.state === 'closing' || this.failedSends.length > 0 || b.pendingEvents >= this.config.maxEventsPerSend || b.pendingBytes >= this.config.maxBytesPerSend;
    if (full && wait <= 0) {
      this.flushQueued = true;
      setImmediate(this.flushNow);
    } else if (this.lingerTimer === undefined) {
      this.lingerTimer = setTimeout(this.flushNow, full ? wait : Math.max(this.config.lingerMs, wait));
      this.lingerTimer.unref();
    }
  }

  private readonly flushNow = (): void => {
    this.flushQueued = false;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    if (this.state === 'closed') return;
    if (this.retryAt !== 0) {
      if (this.now() < this.retryAt) return this.scheduleFlush();
      this.retryAt = 0;
    }
    // Failed sends go again as they were, one at a time, before anything newer (see failedSends).
    if (this.failedSends.length > 0) {
      if (this.active.size === 0) void this.send(this.failedSends.shift()!);
      return;
    }
    while (this.active.size < this.config.maxInFlight && this.buffer.pendingEvents > 0) {
      const prepared = this.prepare(this.buffer.take(this.config.maxEventsPerSend, this.config.maxBytesPerSend));
      if (prepared.records.length > 0) void this.send(prepared);
    }
  };

  private async send(prepared: PreparedSend): Promise<void> {
    const { items, records, eventsPerRecord } = prepared;
    const send: ActiveSend = { items, abandoned: false };
    this.active.add(send);
    const started = this.now();
    try {
      try {
        await this.sink.send(records);
      } catch (error) {
        if (!send.abandoned) this.failed(prepared, error);
        return;
      }
      if (send.abandoned) return;
      this.buffer.settle(send.items, 'delivered');
      this.metrics.produceSeconds.observe((this.now() - started) / 1000);
      for (const n of eventsPerRecord) this.metrics.recordEvents.observe(n);
    } finally {
      this.active.delete(send);
      this.metrics.sync(this.buffer.stats());
      this.onSettled?.();
      this.scheduleFlush();
    }
  }

  /** Records of the taken events, keyed by client network; events that cannot be sent are dropped as invalid. */
  private prepare(taken: Pending<BufferedEvent>[]): PreparedSend {
    let records: EncodedRecord<BufferedEvent>[] = [];
    let unusable: Pending<BufferedEvent>[];
    try {
      const { groups, invalid: keyless } = groupByKey(taken, partitionKeyOf, this.config.maxEventsPerRecord, eventTimeOf, this.config.maxRecordSpanMs);
      const encoded = encodeGroups(groups, this.encodeBatch, this.isValidEvent);
      records = encoded.records;
      unusable = keyless.concat(encoded.invalid);
    } catch (error) {
      this.logger.error({ err: error, events: taken.length }, 'events could not be grouped or encoded: dropped');
      unusable = taken;
    }
    if (unusable.length > 0) this.noteDrop('invalid', unusable.length, () => this.buffer.settle(unusable, 'invalid'));
    return {
      items: records.flatMap((r) => r.items),
      records: records.map((r) => ({ key: r.key, value: r.value })),
      eventsPerRecord: records.map((r) => r.items.length),
    };
  }

  /** A send that failed: kept to be sent again as it was, or dropped when Kafka refuses it for good. */
  private failed(prepared: PreparedSend, error: unknown): void {
    const { items } = prepared;
    if (isPermanentFailure(error)) {
      this.logger.error({ err: error, events: items.length }, 'kafka refused the records for good: dropped');
      return this.noteDrop('rejected', items.length, () => this.buffer.settle(items, 'rejected'));
    }
    // Oldest first: concurrent sends (a custom sink) may fail in any order.
    const at = this.failedSends.findIndex((f) => f.items[0]!.seq > items[0]!.seq);
    this.failedSends.splice(at < 0 ? this.failedSends.length : at, 0, prepared);
    this.retryAt = this.now() + this.config.retryBackoffMs;
    if (this.now() - this.lastFailureLogAt >= this.config.dropLogIntervalMs) {
      this.lastFailureLogAt = this.now();
      this.logger.warn({ err: error, events: items.length }, 'kafka send failed: events kept in the buffer and retried');
    }
  }

  private noteDrop(reason: DropReason, count: number, apply?: () => void): void {
    apply?.();
    const line = this.dropLog.note(reason, count, this.now());
    if (line) this.logDrops(line);
  }

  private sync(): void {
    const line = this.dropLog.due(this.now());
    if (line) this.logDrops(line);
    this.metrics.sync(this.buffer.stats());
  }

  private logDrops(dropped: Partial<Record<DropReason, number>>): void {
    const s = this.buffer.stats();
    this.logger.warn({ dropped, bufferBytes: s.pendingBytes + s.inFlightBytes, budgetBytes: s.budgetBytes }, 'edge publisher dropped events (Kafka slow or unreachable, or events unusable)');
  }
}

function eventTimeOf(event: BufferedEvent): number | undefined {
  if (isEncoded(event)) return event.timestamp ?? encodedTimestamp(event.body);
  return typeof event.timestamp === 'number' ? event.timestamp : undefined;
}

function partitionKeyOf(event: BufferedEvent): string | undefined {
  if (isEncoded(event)) return event.key;
  const ip = typeof event.ip === 'string' ? tryParseIp(event.ip) : undefined;
  return ip === undefined ? undefined : eventPartitionKey(ip);
}

/** Avro takes any int as a cost; every reader refuses one out of 1..MAX_COST, so the edge drops it as invalid instead of sending it. */
function costInRange(event: BufferedEvent): boolean {
  const cost = (event as { cost?: unknown }).cost;
  return cost === undefined || costProblem(cost) === undefined;
}
