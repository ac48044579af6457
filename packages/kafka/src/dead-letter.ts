import type { Producer } from 'kafkajs';
import { BanstreamError } from '@banstream/core';
import { SCHEMA_NAMES, type DlqRecord, type SchemaCatalog } from '@banstream/schemas';
import { inSends, type KafkaRefusal } from './capped-sends.js';
import { sendUntilAnswered } from './key-partitioner.js';

/**
 * Reason codes of the DLQ that are not a BanstreamError's own: a record whose handling
 * threw something else (a bug met by hostile input), and a record a process stalled on
 * (service/watchdog), dead-lettered unhandled by the process that took over; and a
 * record banstream wrote that Kafka refused for what it is (refusedRecord).
 */
export const DLQ_REASON = { handlingFailed: 'RECORD_HANDLING_FAILED', stalled: 'RECORD_STALLED', refused: 'OUTPUT_REFUSED' } as const;

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
 * than that once decompressed: a dead letter that Kafka refuses would be lost. Two cut
 * records never share a send (KAFKA_MAX_SEND_BYTES). A cut record says so; the whole
 * of it stays at its topic, partition and offset for the topic's retention.
 */
export const DLQ_MAX_VALUE_BYTES = 512 * 1024;
export const DLQ_MAX_KEY_BYTES = 16 * 1024;
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
    originalTopic: source.topic,
    partition: source.partition,
    offset: Number(source.offset),
    key: keptKey,
    value: keptValue,
    reasonCode: reason.code,
    reasonMessage: message,
    at: nowMs,
  };
}

/**
 * The DLQ record for a record banstream wrote and Kafka refused for what it is (too
 * large, invalid: capped-sends.ts): where it was going (partition -1: chosen by its
 * key), offset -1 as it was never written, and Kafka's reason. Once the cause is
 * fixed, its value can be written to that topic again.
 */
export function refusedRecord(destination: { topic: string; partition?: number | undefined }, key: Buffer | string | null, value: Buffer | null, refusal: KafkaRefusal, nowMs: number): DlqRecord {
  const message = `Kafka refused this record for ${destination.topic}${destination.partition === undefined ? '' : ` partition ${destination.partition}`}: ${refusal.type}: ${refusal.message}`;
  const source = { topic: destination.topic, partition: destination.partition ?? -1, offset: '-1', key: typeof key === 'string' ? Buffer.from(key) : key, value };
  return deadLetterRecord(source, { code: DLQ_REASON.refused, message }, nowMs);
}

/** A thrown error as a DLQ reason: its own code when it is a BanstreamError, else `fallback`. */
export function reasonOfError(error: unknown, fallback: string = DLQ_REASON.handlingFailed): DeadLetterReason {
  const code = error instanceof BanstreamError ? error.code : fallback;
  // A TypeError or RangeError names itself: that is most of what its message says.
  const named = error instanceof Error && !(error instanceof BanstreamError) && error.name !== 'Error';
  const message = error instanceof Error ? (named ? `${error.name}: ${error.message}` : error.message) : String(error);
  return { code, message };
}

/** Writes dead letters; resolves once Kafka acknowledged them. */
export type DeadLetterSink = (records: readonly DlqRecord[]) => Promise<void>;

export interface DeadLetterSinkOptions {
  topic: string;
  catalog: SchemaCatalog;
  /** The producer to send with, connected, made with KeyPartitioner (sendUntilAnswered). */
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
        // A send can resolve without some partitions (their leader moved): their dead letters go again until every one is acknowledged.
        await sendUntilAnswered((left) => producer.send({ topic: options.topic, acks: -1, messages: left[0]!.messages }), [{ topic: options.topic, messages }]);
      }
    } catch (error) {
      options.failed?.(producer);
      throw error;
    }
  };
}
