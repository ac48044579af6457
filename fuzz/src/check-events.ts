import { isBanstreamError } from '@banstream/core';
import { concatBatch, groupByKey, type EncodedEvent } from '@banstream/edge';
import { SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { decodeAvroBody } from '../../services/ingest/dist/events/decode-body.js';
import { scanBatch } from '../../services/ingest/dist/events/avro-scan.js';
import { prepareDecoded, type Prepared } from '../../services/ingest/dist/events/prepare.js';
import { difference, pick } from './equal.js';
import type { Answer, Probe } from './probe.js';
import { decodeBody, decodeSingleObject, Refused, resolve } from './reference.js';
import { COUNTED_FIELDS, type Sut } from './sut.js';
import { COSTLESS_EVENTS, COSTLY_EVENTS, countsOf } from './tally.js';

/**
 * Every reader of the events record on one input, against the reference:
 * - catalog.codec (avsc with the guard), aggregator.avsc (its projection, with and
 *   without headers): accept exactly what the reference accepts, with its values;
 * - aggregator.reader (hand-written): whatever it answers, the reference's values
 *   (it may leave an input to aggregator.avsc);
 * - gateway.slow (avsc, validate, normalise, re-encode): accepts exactly what the
 *   reference accepts and the validator finds valid; gateway.scan: whatever it takes,
 *   what gateway.slow gives;
 * - gateway→aggregator: what the gateway accepted, packed as its publisher packs it,
 *   read back by the aggregator (hand-written reader, else avsc) as the same events.
 */
export function checkEvents(sut: Sut, bytes: Buffer, probe: Probe): void {
  const name = SCHEMA_NAMES.requestEventBatch;
  const { node } = sut.latest.get(name)!;
  const ref = reference(probe, () => {
    const { writer, value } = decodeSingleObject(sut.writers, name, bytes);
    return (resolve(writer.node, node, value) as { events: Record<string, unknown>[] }).events;
  });
  if (ref === 'crashed') return;
  if (ref.ok) costRows(sut, bytes, probe, ref.value);
  const counted = (events: Record<string, unknown>[], headers: boolean) => events.map((e) => pick(e, headers ? [...COUNTED_FIELDS, 'headers'] : COUNTED_FIELDS));

  const full = probe.run('catalog.codec', () => sut.batchCodec.decode(bytes));
  if (designed(probe, 'catalog.codec', full)) {
    agree(
      probe,
      'catalog.codec',
      full,
      ref,
      (v) => ({ events: v.events }),
      (events) => ({ events }),
    );
    if (full.ok && !sut.latest.get(name)!.version.type.isValid(full.value)) probe.fail('catalog.codec', 'crashes', 'decoded a value its schema calls invalid');
  }
  for (const a of sut.aggregator) {
    const slow = `aggregator.avsc${a.headers ? '+headers' : ''}`;
    const answer = probe.run(slow, () => a.decode(bytes).events);
    if (designed(probe, slow, answer))
      agree(
        probe,
        slow,
        answer,
        ref,
        (v) => v,
        (events) => counted(events, a.headers),
      );
    const fast = `aggregator.reader${a.headers ? '+headers' : ''}`;
    const read = probe.run(fast, () => a.read(bytes));
    if (!read.ok) probe.fail(fast, 'crashes', `threw ${describe(read.error)}`);
    else if (read.value !== undefined) {
      probe.accepted(fast);
      if (!ref.ok) probe.fail(fast, 'disagreements', `accepted what the reference refuses (${ref.error.message})`);
      else same(probe, fast, read.value, counted(ref.value, a.headers));
    }
  }
  checkGateway(sut, bytes, probe, ref);
}

type RefAnswer = { ok: true; value: Record<string, unknown>[] } | { ok: false; error: Refused };

/** Counts the accepted inputs that carry a cost other than 1, or come from a writer without the field (read as 1 by all). */
function costRows(sut: Sut, bytes: Buffer, probe: Probe, events: Record<string, unknown>[]): void {
  const batch = sut.writers.get(bytes.readBigUInt64LE(2))?.node;
  const array = batch?.kind === 'record' ? batch.fields[0]?.type : undefined;
  const event = array?.kind === 'array' ? array.items : undefined;
  const hasCost = event?.kind === 'record' && event.fields.some((f) => f.name === 'cost');
  if (!hasCost) countsOf(probe.tally, COSTLESS_EVENTS).tried++;
  if (events.some((e) => e.cost !== 1)) countsOf(probe.tally, COSTLY_EVENTS).tried++;
}

function reference(probe: Probe, decode: () => Record<string, unknown>[]): RefAnswer | 'crashed' {
  const answer = probe.run('reference', decode);
  if (answer.ok) {
    probe.accepted('reference');
    return answer;
  }
  if (answer.error instanceof Refused) return { ok: false, error: answer.error };
  probe.fail('reference', 'crashes', `threw ${describe(answer.error)}`);
  return 'crashed';
}

/** Whether a decoder's answer is a value or its designed error (a BanstreamError); anything else is a crash. */
function designed(probe: Probe, reader: string, answer: Answer<unknown>): boolean {
  if (answer.ok || (isBanstreamError(answer.error) && answer.error.code.startsWith('SCHEMA_'))) return true;
  probe.fail(reader, 'crashes', `threw ${describe(answer.error)}`);
  return false;
}

function agree<T>(probe: Probe, reader: string, answer: Answer<T>, ref: RefAnswer, view: (v: T) => unknown, expected: (events: Record<string, unknown>[]) => unknown): void {
  if (answer.ok) probe.accepted(reader);
  if (answer.ok !== ref.ok) {
    const detail = ref.ok ? `refused what the reference accepts: ${describe((answer as { error: unknown }).error)}` : `accepted what the reference refuses (${ref.error.message})`;
    probe.fail(reader, 'disagreements', detail);
    return;
  }
  if (answer.ok && ref.ok) same(probe, reader, view(answer.value), expected(ref.value));
}

function same(probe: Probe, reader: string, actual: unknown, expected: unknown): boolean {
  const at = difference(actual, expected);
  if (at) probe.fail(reader, 'disagreements', `decodes otherwise than the reference at ${at}`);
  return !at;
}

function checkGateway(sut: Sut, bytes: Buffer, probe: Probe, ref: RefAnswer): void {
  const p = sut.preparation;
  const slow = probe.run('gateway.slow', (): Prepared => {
    const decoded = decodeAvroBody(bytes, p.batchCodec);
    return decoded.ok ? prepareDecoded(decoded.events, p) : decoded;
  });
  const scan = probe.run('gateway.scan', () => scanBatch(bytes, p.batchCodec.fingerprint, p.geo, p.time.nowMs + p.time.maxFutureMs));
  if (!slow.ok) probe.fail('gateway.slow', 'crashes', `threw ${describe(slow.error)}`);
  if (!scan.ok) probe.fail('gateway.scan', 'crashes', `threw ${describe(scan.error)}`);
  if (!slow.ok) return;

  // What the gateway must do: refuse what the reference refuses, else what validation says.
  const expected: Prepared = ref.ok ? prepareDecoded(ref.value, p) : { ok: false, code: 'BAD_AVRO', message: ref.error.message };
  if (slow.value.ok) probe.accepted('gateway.slow');
  if (slow.value.ok !== expected.ok || (!slow.value.ok && !expected.ok && slow.value.code !== expected.code)) {
    probe.fail('gateway.slow', 'disagreements', `answered ${slow.value.ok ? 'ok' : slow.value.code}, the reference and validation say ${expected.ok ? 'ok' : expected.code}`);
    return;
  }
  if (!slow.value.ok || !expected.ok) return;
  const slowEvents = eventsOf(sut, slow.value.events);
  if (!same(probe, 'gateway.slow', slowEvents, eventsOf(sut, expected.events))) return;
  if (scan.ok && scan.value !== undefined) {
    probe.accepted('gateway.scan');
    if (same(probe, 'gateway.scan', eventsOf(sut, scan.value.events), slowEvents)) {
      const geo = difference(scan.value.geo, slow.value.geo);
      if (geo) probe.fail('gateway.scan', 'disagreements', `geography counts differ at ${geo}`);
      const times = scan.value.events.findIndex((e, i) => e.timestamp !== (slowEvents[i]!.event as RequestEvent).timestamp);
      if (times >= 0) probe.fail('gateway.scan', 'disagreements', `the timestamp it read of event ${times} is not the event's`);
    }
  }
  readBack(sut, probe, scan.ok && scan.value !== undefined ? scan.value.events : slow.value.events);
}

/** An accepted batch's events as the reference reads their bytes, with their keys. */
function eventsOf(sut: Sut, events: readonly EncodedEvent[]): { key: string; event: unknown }[] {
  return events.map((e) => {
    try {
      return { key: e.key, event: decodeBody(sut.eventNode, e.body, 0) };
    } catch (error) {
      return { key: e.key, event: `unreadable: ${describe(error)}` };
    }
  });
}

/** The gateway's output as its publisher packs it (one record per key), read by the aggregator as it reads. */
function readBack(sut: Sut, probe: Probe, events: readonly EncodedEvent[]): void {
  const boundary = 'gateway→aggregator';
  const { groups } = groupByKey(
    events.map((value, seq) => ({ value, bytes: 0, seq })),
    (e) => e.key,
    500,
  );
  for (const group of groups) {
    const record = concatBatch(
      sut.batchHeader,
      group.items.map((i) => i.value.body),
    );
    let sent: Record<string, unknown>[];
    try {
      sent = (decodeSingleObject(sut.writers, SCHEMA_NAMES.requestEventBatch, record).value as { events: Record<string, unknown>[] }).events;
    } catch (error) {
      probe.fail(boundary, 'lost', `the gateway's record breaks the contract: ${describe(error)}`);
      continue;
    }
    for (const a of sut.aggregator) {
      const got = probe.run(boundary, () => a.read(record) ?? a.decode(record).events);
      if (!got.ok) {
        probe.fail(boundary, 'lost', `the aggregator refused the gateway's record: ${describe(got.error)}`);
        continue;
      }
      probe.accepted(boundary);
      const at = difference(
        got.value,
        sent.map((e) => pick(e, a.headers ? [...COUNTED_FIELDS, 'headers'] : COUNTED_FIELDS)),
      );
      if (at) probe.fail(boundary, 'lost', `the aggregator read the gateway's events otherwise at ${at}`);
    }
  }
}

function describe(error: unknown): string {
  if (isBanstreamError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
