import { describe, expect, it } from 'vitest';
import { BanstreamError } from '@banstream/core';
import { loadSchemaCatalog, SCHEMA_NAMES, type DlqRecord } from '@banstream/schemas';
import { deadLetterRecord, DLQ_MAX_KEY_BYTES, DLQ_MAX_SEND_BYTES, DLQ_MAX_VALUE_BYTES, inSends, reasonOfError } from './dead-letter.js';

describe('deadLetterRecord', () => {
  const source = { topic: 'p.events.v1', partition: 3, offset: '12', key: Buffer.from('k'), value: Buffer.from('v') };

  it('keeps a record whole, where it came from and why', () => {
    expect(deadLetterRecord(source, { code: 'SCHEMA_BAD_MAGIC', message: 'bad' }, 99)).toEqual({
      originalTopic: 'p.events.v1', partition: 3, offset: 12, key: Buffer.from('k'), value: Buffer.from('v'), reasonCode: 'SCHEMA_BAD_MAGIC', reasonMessage: 'bad', at: 99,
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

describe('reasonOfError', () => {
  it('keeps a BanstreamError code, names other errors, and falls back to RECORD_HANDLING_FAILED', () => {
    expect(reasonOfError(new BanstreamError('WINDOW_INVALID_ARGUMENT', 'count must be…'))).toEqual({ code: 'WINDOW_INVALID_ARGUMENT', message: 'count must be…' });
    expect(reasonOfError(new TypeError('x is undefined'))).toEqual({ code: 'RECORD_HANDLING_FAILED', message: 'TypeError: x is undefined' });
    expect(reasonOfError(new Error('plain'))).toEqual({ code: 'RECORD_HANDLING_FAILED', message: 'plain' });
    expect(reasonOfError('thrown text', 'OTHER')).toEqual({ code: 'OTHER', message: 'thrown text' });
  });
});

describe('inSends', () => {
  const m = (bytes: number, key: Buffer | null = null) => ({ key, value: Buffer.alloc(bytes) });

  it('keeps every send under the bound, in order, a message larger than it alone', () => {
    const messages = [m(100), m(300, Buffer.alloc(50)), m(600), m(2_000), m(10), m(20)];
    expect(inSends(messages, 1_000).map((send) => send.map((x) => messages.indexOf(x)))).toEqual([[0, 1], [2], [3], [4, 5]]);
    expect(inSends([], 1_000)).toEqual([]);
  });

  it('never puts two cut records in one send', () => {
    const cut = m(DLQ_MAX_VALUE_BYTES + 200, Buffer.alloc(DLQ_MAX_KEY_BYTES));
    expect(inSends([cut, cut, m(10)]).map((s) => s.length)).toEqual([1, 2]);
    expect(2 * (cut.value.length + DLQ_MAX_KEY_BYTES)).toBeGreaterThan(DLQ_MAX_SEND_BYTES);
  });
});
