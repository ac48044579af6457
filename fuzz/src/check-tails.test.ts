import { describe, expect, it } from 'vitest';
import { requestEvent } from '@banstream/schemas';
import { checkTails, READ_TAIL } from './check-tails.js';
import { Probe } from './probe.js';
import { buildSut } from './sut.js';
import type { Tally } from './tally.js';

/** The readTail row on one record, against the given view of its events. */
function run(bytes: Buffer, reference: Record<string, unknown>[] | undefined): { tally: Tally; failures: Probe['failures'] } {
  const tally: Tally = {};
  const probe = new Probe(tally, 10_000_000_000n);
  checkTails(buildSut(), bytes, probe, reference);
  return { tally, failures: probe.failures };
}

describe('the aggregator.readTail row', () => {
  const sut = buildSut();
  const events = [
    requestEvent({ headers: { 'user-agent': 'first', accept: '*/*' }, edgeId: 'edge-a' }),
    requestEvent({ headers: {}, edgeId: 'edge-b' }),
    requestEvent({ headers: { 'user-agent': 'x', 'User-Agent': 'y' }, edgeId: 'edge-c' }),
  ];
  const bytes = sut.batchCodec.encode({ events });

  it('accepts the user agent and edge of each event of a record the reader takes', () => {
    const { tally, failures } = run(bytes, events as unknown as Record<string, unknown>[]);
    expect(failures).toEqual([]);
    expect(tally[READ_TAIL]).toMatchObject({ tried: 1, accepted: 1, lost: 0, crashes: 0 });
  });

  it('counts an event whose evidence it reads otherwise than the reference as lost', () => {
    const other = events.map((e, i) => (i === 1 ? { ...e, edgeId: 'elsewhere' } : e));
    const { tally, failures } = run(bytes, other as unknown as Record<string, unknown>[]);
    expect(tally[READ_TAIL]!.lost).toBe(1);
    expect(failures[0]!.detail).toMatch(/event 1: .*"edge-b".*"elsewhere"/);
  });

  it('tries a record the reader leaves to avsc at stray offsets only, and accepts nothing of it', () => {
    const { tally, failures } = run(bytes.subarray(0, bytes.length - 3), undefined);
    expect(failures).toEqual([]);
    expect(tally[READ_TAIL]).toMatchObject({ tried: 1, accepted: 0 });
  });
});
