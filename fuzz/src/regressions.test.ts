import { isBanstreamError } from '@banstream/core';
import { encodeSingleObject, loadSchemaCatalog, requestEvent, SCHEMA_NAMES } from '@banstream/schemas';
import { describe, expect, it } from 'vitest';
import { countedEventsDecoder } from '../../packages/engine/dist/counted-event.js';
import { countedEventsReader } from '../../packages/engine/dist/counted-event-reader.js';
import { scanBatch } from '../../services/ingest/dist/events/avro-scan.js';
import { runFuzz } from './runner.js';
import { varint } from './writer.js';

/**
 * The records that broke a reader, one test each. Every one is first tried by the
 * harness in a watched worker thread (all readers against the reference; a hang is
 * reported, not waited for), then looked at closely here once it is known to end.
 */
const catalog = loadSchemaCatalog();
const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
const EVENTS = SCHEMA_NAMES.requestEventBatch;

const event = requestEvent({ timestamp: 1_764_000_000_000, country: 'FR', host: 'a.example', headers: { 'user-agent': 'curl/8.0' } });
const valid = codec.encode({ events: [event] });
/** The headers map: its count (1), then the key 'user-agent'. */
const headersAt = valid.indexOf(Buffer.from([2, 20, ...Buffer.from('user-agent')]));
const entryBytes = 1 + 10 + 1 + 8;

/** The valid record with bytes [at, at + remove) replaced. */
function patched(at: number, remove: number, insert: number[]): Buffer {
  return Buffer.concat([valid.subarray(0, at), Buffer.from(insert), valid.subarray(at + remove)]);
}

/** The harness on these records, in a watched thread: failures found, and what each reader accepted. */
async function harness(records: Buffer[], target: string = EVENTS) {
  const result = await runFuzz({ seconds: 30, seed: 0, workers: 1, limitMs: 100, hangMs: 3_000, stopAtFirst: true, inputs: records.map((r) => ({ target, hex: r.toString('hex') })) });
  return { failures: result.failures, first: result.first, accepted: (reader: string) => result.tally[reader]?.accepted ?? 0 };
}

function refusal(record: Buffer): string {
  try {
    codec.decode(record);
    return 'accepted';
  } catch (error) {
    return isBanstreamError(error) ? `${error.code}: ${error.message}` : `raw: ${String(error)}`;
  }
}

describe('records that broke a reader', () => {
  it('the headers map as a block of -1 item and a size of -2 (the 91-byte record that stopped the aggregator; 92 with the cost of v2): refused by all, at once', async () => {
    const attack = patched(headersAt, 1, [...varint(-1), ...varint(-2)]);
    expect(attack.length).toBe(92);
    const run = await harness([attack]);
    expect(run.first).toBeUndefined();
    expect(run.failures).toBe(0);
    expect(run.accepted('reference')).toBe(0);
    // Known to end: the answers themselves.
    const started = performance.now();
    expect(scanBatch(attack, codec.fingerprint, undefined, Number.MAX_SAFE_INTEGER)).toBeUndefined();
    for (const headers of [true, false]) {
      expect(countedEventsReader(catalog, { headers })(attack)).toBeUndefined();
      expect(() => countedEventsDecoder(catalog, { headers }).decode(attack)).toThrow(/events\[0\]\.headers: a block size is negative/);
    }
    expect(refusal(attack)).toMatch(/^SCHEMA_TRUNCATED: request-event-batch body: events\[0\]\.headers: a block size is negative \(at byte \d+ of 92\)$/);
    expect(performance.now() - started).toBeLessThan(1_000);
  }, 60_000);

  it('a sized block whose size is off by a byte or points elsewhere: refused by all, whether the map is read or skipped', async () => {
    const sized = (size: number) => patched(headersAt, 1, [...varint(-1), ...varint(size)]);
    const wrong = [entryBytes - 1, entryBytes + 1, entryBytes + 7, 0, 2 ** 31];
    const run = await harness(wrong.map(sized));
    expect(run.first).toBeUndefined();
    expect(run.accepted('reference')).toBe(0);
    for (const size of wrong) expect(refusal(sized(size))).toMatch(/events\[0\]\.headers/);
    // The exact size is valid Avro: read alike by every reader that reads it.
    const exact = await harness([sized(entryBytes)]);
    expect(exact.first).toBeUndefined();
    expect(exact.accepted('catalog.codec')).toBe(1);
    expect(exact.accepted('gateway.slow')).toBe(1);
    expect(exact.accepted('aggregator.avsc')).toBe(1);
  }, 60_000);

  it('varints that are not minimal, longer than a long, or out of range: refused by all', async () => {
    const timestampAt = 10 + 1 + 1 + 2; // batch count, eventId length, 'e1'
    const timestamp = varint(event.timestamp);
    const records = [
      patched(timestampAt, timestamp.length, [...timestamp.slice(0, -1), timestamp.at(-1)! | 0x80, 0x00]), // one zero group too many
      patched(timestampAt, timestamp.length, [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]), // 11 bytes for 0
      patched(timestampAt, timestamp.length, varint(2n ** 53n)), // beyond exact doubles
      patched(timestampAt, timestamp.length, varint(2n ** 63n - 1n)),
    ];
    const run = await harness(records);
    expect(run.first).toBeUndefined();
    expect(run.accepted('reference')).toBe(0);
    for (const r of records) expect(refusal(r)).toMatch(/events\[0\]\.timestamp: a long is (not minimally encoded|out of range)/);
  }, 60_000);

  it('an int out of 32 bits (status 2^40) and a boolean byte of 2: refused by all', async () => {
    const statusAt = valid.indexOf(Buffer.from([...varint(200), 0x00, 0x00, 0x02])); // status, two nulls, the headers' count
    const bigStatus = patched(statusAt, 2, varint(2 ** 40));
    const ban = catalog.codec(SCHEMA_NAMES.ban);
    const banBytes = ban.encode({
      banId: 'b',
      subject: 'ip:203.0.113.7',
      policyId: 'manual',
      reason: 'r',
      evidenceCount: 0,
      windowSeconds: 0,
      startedAt: 1,
      expiresAt: 2,
      preview: false,
      escalationLevel: 0,
      origin: 'manual',
      httpStatus: 403,
      createdBy: null,
    });
    const previewAt = banBytes.length - 1 - 1 - 2 - 7 - 1 - 1; // evidence, createdBy, httpStatus, origin, escalationLevel: the byte before
    expect(banBytes[previewAt]).toBe(0);
    const badBoolean = Buffer.from(banBytes);
    badBoolean[previewAt] = 2;
    expect((await harness([bigStatus])).first).toBeUndefined();
    expect((await harness([badBoolean], SCHEMA_NAMES.ban)).first).toBeUndefined();
    expect(refusal(bigStatus)).toMatch(/events\[0\]\.status: an int is out of range/);
    expect(() => ban.decode(badBoolean)).toThrow(/preview: a boolean byte is neither 0 nor 1/);
  }, 60_000);

  it('costs: a record with costs, out of range, overlong, and one written before costs: every reader alike', async () => {
    const costly = codec.encode({
      events: [
        { ...event, cost: 5 },
        { ...event, eventId: 'e2', cost: 1_000_000 },
      ],
    });
    const outOfRange = [0, -1, 1_000_001, 2 ** 31 - 1].map((cost) => codec.encode({ events: [{ ...event, cost }] }));
    // The cost is the event's last field: the record's last bytes are its varint, then the array's end (0).
    const five = codec.encode({ events: [{ ...event, cost: 5 }] });
    expect(five.subarray(-2)).toEqual(Buffer.from([10, 0]));
    const overlong = Buffer.concat([five.subarray(0, -2), Buffer.from([0x8a, 0x00, 0x00])]);
    const [v1] = catalog.versions(EVENTS);
    const before: Partial<typeof event> = { ...event };
    delete before.cost;
    const old = encodeSingleObject(v1!.type, v1!.fingerprint, { events: [before] }, EVENTS);
    const run = await harness([costly, ...outOfRange, overlong, old]);
    expect(run.first).toBeUndefined();
    expect(run.failures).toBe(0);
    for (const headers of [true, false]) {
      const read = countedEventsReader(catalog, { headers });
      expect(read(costly)!.map((e) => e.cost)).toEqual([5, 1_000_000]);
      // Valid Avro: read as written, refused by checkEvent (COST_OUT_OF_RANGE) as avsc's reading would be.
      expect(outOfRange.map((r) => read(r)![0]!.cost)).toEqual([0, -1, 1_000_001, 2 ** 31 - 1]);
      expect(read(overlong)).toBeUndefined();
      // A v1 writer: read by the hand-written reader as avsc's projection reads it, cost 1.
      expect(countedEventsDecoder(catalog, { headers }).decode(old).events[0]!.cost).toBe(1);
      expect(read(old)).toEqual(countedEventsDecoder(catalog, { headers }).decode(old).events);
    }
    expect(refusal(overlong)).toMatch(/events\[0\]\.cost: a long is not minimally encoded/);
    expect(codec.decode(old).events[0]!.cost).toBe(1);
    // The gateway's scan takes the costly record as it is, and leaves those out of range to the slow path, which refuses them.
    expect(scanBatch(costly, codec.fingerprint, undefined, Number.MAX_SAFE_INTEGER)?.events).toHaveLength(2);
    for (const r of outOfRange) expect(scanBatch(r, codec.fingerprint, undefined, Number.MAX_SAFE_INTEGER)).toBeUndefined();
    expect(run.accepted('gateway.scan')).toBe(1);
    expect(run.accepted('gateway.slow')).toBe(2); // the costly record and the old one, read as cost 1
  }, 60_000);

  it('a header named __proto__ or constructor: kept as a key like any other, by every reader', async () => {
    const record = codec.encode({ events: [{ ...event, headers: Object.assign(Object.create(null) as Record<string, string>, { ['__proto__']: 'p', constructor: 'c' }) }] });
    const run = await harness([record]);
    expect(run.first).toBeUndefined();
    expect(run.accepted('aggregator.reader+headers')).toBe(1);
    const headers = countedEventsReader(catalog, { headers: true })(record)![0]!.headers!;
    expect(Object.keys(headers).sort()).toEqual(['__proto__', 'constructor']);
    expect(Object.keys(codec.decode(record).events[0]!.headers).sort()).toEqual(['__proto__', 'constructor']);
  }, 60_000);
});
