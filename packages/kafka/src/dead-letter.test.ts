import { describe, expect, it } from 'vitest';
import { BanstreamError } from '@banstream/core';
import { loadSchemaCatalog, SCHEMA_NAMES, type DlqRecord } from '@banstream/schemas';
import type { Message, Producer, RecordMetadata } from 'kafkajs';
import { deadLetterRecord, deadLetterSink, DLQ_MAX_KEY_BYTES, DLQ_MAX_VALUE_BYTES, reasonOfError, refusedRecord } from './dead-letter.js';
import { KeyPartitioner } from './key-partitioner.js';

describe('deadLetterRecord', () => {
  const source = { topic: 'p.events.v1', partition: 3, offset: '12', key: Buffer.from('k'), value: Buffer.from('v') };

  it('keeps a record whole, where it came from and why', () => {
    expect(deadLetterRecord(source, { code: 'SCHEMA_BAD_MAGIC', message: 'bad' }, 99)).toEqual({
      originalTopic: 'p.events.v1',
      partition: 3,
      offset: 12,
      key: Buffer.from('k'),
      value: Buffer.from('v'),
      reasonCode: 'SCHEMA_BAD_MAGIC',
      reasonMessage: 'bad',
      at: 99,
    });
  });

  it('cuts a value or key the DLQ topic could not take, says so, and stays under 1 MiB encoded', () => {
    const huge = { ...source, key: Buffer.alloc(DLQ_MAX_KEY_BYTES + 1, 1), value: Buffer.alloc(8 << 20, 2) };
    const record = deadLetterRecord(huge, { code: 'SCHEMA_BAD_MAGIC', message: 'x'.repeat(10_000) }, 1);
    expect(record.value.length).toBe(DLQ_MAX_VALUE_BYTES);
    expect(record.key?.length).toBe(DLQ_MAX_KEY_BYTES);
    expect(record.reasonMessage).toMatch(/value cut to its first 524288 of 8388608 bytes, key cut to its first 16384 of 16385 bytes: the whole record is at its topic, partition and offset\)$/);
    const encoded = loadSchemaCatalog().codec<DlqRecord>(SCHEMA_NAMES.dlqRecord).encode(record);
    expect(encoded.length + (record.key?.length ?? 0)).toBeLessThan(1 << 20);
  });
});

describe('refusedRecord', () => {
  it("keeps a record Kafka refused, where it was going, never written (offset -1), with Kafka's reason", () => {
    const refusal = { type: 'MESSAGE_TOO_LARGE', message: 'The request included a message larger than the max message size the server will accept' };
    expect(refusedRecord({ topic: 'p.counts.v1' }, 'ip:1', Buffer.from('v'), refusal, 7)).toEqual({
      originalTopic: 'p.counts.v1',
      partition: -1,
      offset: -1,
      key: Buffer.from('ip:1'),
      value: Buffer.from('v'),
      reasonCode: 'OUTPUT_REFUSED',
      reasonMessage: `Kafka refused this record for p.counts.v1: MESSAGE_TOO_LARGE: ${refusal.message}`,
      at: 7,
    });
    expect(refusedRecord({ topic: 's', partition: 2 }, null, null, refusal, 7)).toMatchObject({
      partition: 2,
      key: null,
      value: Buffer.alloc(0),
      reasonMessage: expect.stringMatching(/^Kafka refused this record for s partition 2: MESSAGE_TOO_LARGE/),
    });
  });
});

describe('reasonOfError', () => {
  it('keeps a BanstreamError code, names other errors, and falls back to RECORD_HANDLING_FAILED', () => {
    expect(reasonOfError(new BanstreamError('WINDOW_INVALID_ARGUMENT', 'count must be…'))).toEqual({ code: 'WINDOW_INVALID_ARGUMENT', message: 'count must be…' });
    expect(reasonOfError(new TypeError('x is undefined'))).toEqual({ code: 'RECORD_HANDLING_FAILED', message: 'TypeError: x is undefined' });
    expect(reasonOfError(new Error('plain'))).toEqual({ code: 'RECORD_HANDLING_FAILED', message: 'plain' });
    expect(reasonOfError('thrown text', 'OTHER')).toEqual({ code: 'OTHER', message: 'thrown text' });
  });
});

describe('deadLetterSink', () => {
  const catalog = loadSchemaCatalog();
  const letter = (key: string) => deadLetterRecord({ topic: 'p.bans.v1', partition: 0, offset: '1', key: Buffer.from(key), value: Buffer.from('v') }, { code: 'X', message: 'm' }, 1);

  it('sends again the dead letters of a partition a send resolved without (its leader moved), until each is acknowledged', async () => {
    // A stand-in for kafkajs's send (unit test of the loop): it places each message with
    // KeyPartitioner over 3 partitions, as kafkajs does, and leaves one partition unanswered once.
    const partitioner = KeyPartitioner();
    const sends: { partition: number; key: string }[][] = [];
    let dropped: number | undefined;
    const producer = {
      async send({ topic, messages }: { topic: string; messages: Message[] }): Promise<RecordMetadata[]> {
        const placed = messages.map((message) => ({
          partition: partitioner({ topic, message, partitionMetadata: [0, 1, 2].map((p) => ({ partitionId: p, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 })) }),
          key: String(message.key),
        }));
        sends.push(placed);
        dropped ??= placed[0]!.partition;
        const answered = new Set(placed.map((m) => m.partition));
        if (sends.length === 1) answered.delete(dropped);
        return [...answered].map((partition) => ({ topicName: topic, partition, errorCode: 0 }));
      },
    } as unknown as Producer;
    const sink = deadLetterSink({ topic: 'p.dlq.v1', catalog, producer: async () => producer });
    await sink(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map(letter));
    expect(sends).toHaveLength(2);
    expect(sends[0]).toHaveLength(8);
    expect(sends[1]!.length).toBeGreaterThan(0);
    expect(sends[1]!.every((m) => m.partition === dropped)).toBe(true);
    expect(sends[1]!.map((m) => m.key)).toEqual(sends[0]!.filter((m) => m.partition === dropped).map((m) => m.key));
  });
});
