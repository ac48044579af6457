import type { Producer } from 'kafkajs';
import { BanstreamError } from '@banstream/core';
import { SCHEMA_NAMES, type DlqRecord, type SchemaCatalog } from '@banstream/schemas';

/**
 * Reason codes of the DLQ that are not a BanstreamError's own: a record whose handling
 * threw something else (a bug met by hostile input), and a record a process stalled on
 * (service/watchdog), dead-lettered unhandled by the process that took over.
 */
export const DLQ_REASON = { handlingFailed: 'RECORD_HANDLING_FAILED', stalled: 'RECORD_STALLED' } as const;

export interface DeadLetterReason {
  code: string;
  message: string;
}

/** Where a record was read, and its bytes. */
export interface SourceRecord {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
}

/**
 * Bytes of a value or key the DLQ keeps. The DLQ topic takes records up to the broker's
 * limit (1 MiB by default), and a record read from a compressed batch can be far larger
 * than that once decompressed: a dead letter that Kafka refuses would be retried for
 * ever and stop its partition. A cut record says so; the whole of it stays at its
 * topic, partition and offset for the topic's retention.
 */
export const DLQ_MAX_VALUE_BYTES = 512 * 1024;
export const DLQ_MAX_KEY_BYTES = 16 * 1024;
/**
 * Bytes of dead letters sent at once. The records of one send to one partition form one
 * record batch, and the broker's limit applies to the batch: two cut records together
 * would be refused for ever. One record alone always fits.
 */
export const DLQ_MAX_SEND_BYTES = 768 * 1024;
const MAX_MESSAGE_CHARS = 2_000;

/** The DLQ record for input that could not be used, its bytes untouched up to the bounds above. */
export function deadLetterRecord(source: SourceRecord, reason: DeadLetterReason, nowMs: number): DlqRecord {
  const value = source.value ?? Buffer.alloc(0);
  const cuts: string[] = [];
  const keep = (bytes: Buffer, max: number, what: string) => {
    if (bytes.length <= max) return bytes;
    cuts.push(`${what} cut to its first ${max} of ${bytes.length} bytes`);
    return bytes.subarray(0, max);
  };
  const keptValue = keep(value, DLQ_MAX_VALUE_BYTES, 'value');
  const keptKey = source.key === null ? null : keep(source.key, DLQ_MAX_KEY_BYTES, 'key');
  let message = reason.message.length > MAX_MESSAGE_CHARS ? `${reason.message.slice(0, MAX_MESSAGE_CHARS)}…` : reason.message;
  if (cuts.length > 0) message += ` (${cuts.join(', ')}: the whole record is at its topic, partition and offset)`;
  return {
    originalTopic: source.topic, partition: source.partition, offset: Number(source.offset),
    key: keptKey, value: keptValue, reasonCode: reason.code, reasonMessage: message, at: nowMs,
  };
}

/** A thrown error as a DLQ reason: its own code when it is a BanstreamError, else `fallback`. */
export function reasonOfError(error: unknown, fallback: string = DLQ_REASON.handlingFailed): DeadLetterReason {
  const code = error instanceof BanstreamError ? error.code : fallback;
  // A TypeError or RangeError names itself: that is most of what its message says.
  const named = error instanceof Error && !(error instanceof BanstreamError) && error.name !== 'Error';
  const message = error instanceof Error ? (named ? `${error.name}: ${error.message}` : error.message) : String(error);
  return { code, message };
}

/** Messages grouped into sends of at most DLQ_MAX_SEND_BYTES (a larger message goes alone), in order. */
export function inSends<M extends { key: Buffer | null; value: Buffer }>(messages: readonly M[], maxBytes = DLQ_MAX_SEND_BYTES): M[][] {
  const sends: M[][] = [];
  let current: M[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = m.value.length + (m.key?.length ?? 0);
    if (current.length > 0 && bytes + size > maxBytes) {
      sends.push(current);
      current = [];
      bytes = 0;
    }
    current.push(m);
    bytes += size;
  }
  if (current.length > 0) sends.push(current);
  return sends;
}

/** Writes dead letters; resolves once Kafka acknowledged them. */
export type DeadLetterSink = (records: readonly DlqRecord[]) => Promise<void>;

export interface DeadLetterSinkOptions {
  topic: string;
  catalog: SchemaCatalog;
  /** The producer to send with, connected. */
  producer: () => Promise<Producer>;
  /** Told of a producer whose send failed (an idempotent one shared with other writes may need replacing). */
  failed?: (producer: Producer) => void;
}

/** A sink writing to the DLQ topic. */
export function deadLetterSink(options: DeadLetterSinkOptions): DeadLetterSink {
  const codec = options.catalog.codec(SCHEMA_NAMES.dlqRecord);
  return async (records) => {
    if (records.length === 0) return;
    const producer = await options.producer();
    try {
      for (const messages of inSends(records.map((r) => ({ key: r.key, value: codec.encode(r) })))) {
        await producer.send({ topic: options.topic, acks: -1, messages });
      }
    } catch (error) {
      options.failed?.(producer);
      throw error;
    }
  };
}
