import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isEncoded, type BufferedEvent } from '@banstream/edge';
import { loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { scanBatch } from './avro-scan.js';
import { EVENT_RULES } from './event-rules.js';
import { prepareAvro, prepareDecoded, prepareJson, type Preparation } from './prepare.js';
import { EventValidator } from './validate.js';

const catalog = loadSchemaCatalog();
const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
const eventType = catalog.latest(SCHEMA_NAMES.requestEvent).type;
const validator = new EventValidator(catalog.latest(SCHEMA_NAMES.requestEvent).schema, EVENT_RULES);
const asObject = (e: BufferedEvent): RequestEvent => (isEncoded(e) ? (eventType.fromBuffer(Buffer.from(e.body)) as RequestEvent) : e);
const NOW = 1_800_000_000_000;

const canonical = (i: number, timestamp: number): RequestEvent => requestEvent({ eventId: `e${i}`, timestamp, ip: `203.0.113.${i % 256}`, country: 'AU' });

/** Offsets from the gateway clock: around the bound, well past it, and old. */
const offset = (maxFutureMs: number) => fc.oneof(fc.integer({ min: -10_000, max: 10_000 }), fc.constantFrom(maxFutureMs - 1, maxFutureMs, maxFutureMs + 1, 55_000, 3_600_000, -3_600_000, 2 ** 52));
const batches = fc.integer({ min: 0, max: 10_000 }).chain((maxFutureMs) =>
  fc.record({
    maxFutureMs: fc.constant(maxFutureMs),
    offsets: fc.array(offset(maxFutureMs), { minLength: 1, maxLength: 6 }),
  }),
);

describe('the gateway refuses events dated too far ahead, on every path alike', () => {
  it('the Avro fast path takes a batch only when the slow path accepts it, and the Avro and JSON paths give the same answer', () => {
    let fastTaken = 0;
    let refused = 0;
    fc.assert(
      fc.property(batches, ({ maxFutureMs, offsets }) => {
        const events = offsets.map((o, i) => canonical(i, NOW + o));
        const p: Preparation = { validator, batchCodec: codec, eventType, geo: undefined, time: { nowMs: NOW, maxFutureMs } };
        const body = codec.encode({ events });
        const tooFar = offsets.flatMap((o, i) => (o > maxFutureMs ? [i] : []));

        const fast = scanBatch(body, codec.fingerprint, undefined, NOW + maxFutureMs);
        const slow = prepareDecoded(codec.decode(body).events, p);
        expect(fast !== undefined).toBe(tooFar.length === 0);
        expect(slow.ok).toBe(tooFar.length === 0);
        if (fast && slow.ok) {
          fastTaken++;
          expect(fast.events.map(asObject)).toEqual(slow.events.map(asObject));
        }
        if (!slow.ok) {
          refused++;
          // All or nothing: the batch is refused, and each event too far ahead is named with how far.
          expect(slow.problems).toEqual(
            tooFar.map((index) => ({
              index,
              path: '/timestamp',
              message: `is ${offsets[index]} ms ahead of the gateway clock (at most ${maxFutureMs} ms ahead is accepted)`,
            })),
          );
        }
        const avro = prepareAvro(body, p);
        const json = prepareJson(Buffer.from(JSON.stringify(events)), p);
        expect(avro.ok ? avro.events.map(asObject) : avro).toEqual(json.ok ? json.events.map(asObject) : json);
      }),
      { numRuns: 1_000 },
    );
    expect(fastTaken).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });
});
