import { isBanstreamError } from '@banstream/core';
import { OFF_FAST_PATH } from '@banstream/schemas';
import { readTail } from '../../packages/engine/dist/counted-event-reader.js';
import type { Probe } from './probe.js';
import type { Sut } from './sut.js';

/** The row of the aggregator's evidence reader. */
export const READ_TAIL = 'aggregator.readTail';

/** Offsets tried in each input besides the noted ones: readTail must end, and only by a designed refusal, wherever it starts. */
const STRAY_OFFSETS = 8;

/**
 * aggregator.readTail, on every events input (generated and mutated): for a record the
 * hand-written reader takes, the user agent (the last `user-agent` header given) and
 * the edge of each event, read at the offset the reader noted, must be the reference's
 * (`lost` otherwise: the evidence of a sampled event would be wrong); and started at
 * stray offsets of the same bytes it must return or refuse as the cursor refuses
 * (OFF_FAST_PATH, a BanstreamError), never crash, within the time limit.
 */
export function checkTails(sut: Sut, bytes: Buffer, probe: Probe, reference: Record<string, unknown>[] | undefined): void {
  const reader = sut.aggregator.find((a) => !a.headers)!;
  const answer = probe.run(READ_TAIL, () => {
    const tails: number[] = [];
    const events = reader.read(bytes, tails);
    const stray: unknown[] = [];
    for (let i = 0; i < STRAY_OFFSETS; i++) {
      try {
        readTail(bytes, Math.floor((i * bytes.length) / STRAY_OFFSETS) + (i % 3));
      } catch (error) {
        if (error !== OFF_FAST_PATH && !isBanstreamError(error)) stray.push(error);
      }
    }
    return { tails: events === undefined ? undefined : tails.map((at) => readTail(bytes, at)), stray };
  });
  if (!answer.ok) return probe.fail(READ_TAIL, 'crashes', `threw ${describe(answer.error)}`);
  if (answer.value.stray.length > 0) return probe.fail(READ_TAIL, 'crashes', `threw ${describe(answer.value.stray[0])} at a stray offset`);
  const tails = answer.value.tails;
  // Left to avsc (no offsets noted), or refused by the reference (aggregator.reader's row reports that).
  if (tails === undefined || reference === undefined) return;
  probe.accepted(READ_TAIL);
  if (tails.length !== reference.length) return probe.fail(READ_TAIL, 'lost', `noted ${tails.length} events' offsets, the record has ${reference.length}`);
  reference.forEach((event, i) => {
    const headers = event.headers as Record<string, string>;
    const expected = { userAgent: Object.hasOwn(headers, 'user-agent') ? headers['user-agent'] : undefined, edge: event.edgeId };
    const got = tails[i]!;
    if (got.userAgent !== expected.userAgent || got.edge !== expected.edge) {
      probe.fail(
        READ_TAIL,
        'lost',
        `event ${i}: read user agent ${JSON.stringify(got.userAgent)} and edge ${JSON.stringify(got.edge)}, the record has ${JSON.stringify(expected.userAgent)} and ${JSON.stringify(expected.edge)}`,
      );
    }
  });
}

function describe(error: unknown): string {
  if (isBanstreamError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
