import { describe, expect, it, vi } from 'vitest';
import type { Consumer } from '@banstream/kafka';
import { Occasional } from '@banstream/platform';
import { commitLive, rejoinCause, stalledReason } from './context.js';

/** What kafkajs throws when a commit reaches a group that evicted this member: its retrier's wrapper around the protocol error. */
function evicted(): Error {
  const protocol = Object.assign(new Error('The coordinator is not aware of this member'), { name: 'KafkaJSProtocolError', type: 'UNKNOWN_MEMBER_ID' });
  return Object.assign(new Error(protocol.message, { cause: protocol }), { name: 'KafkaJSNonRetriableError' });
}

const consumer = (failure?: Error) =>
  ({
    commitOffsets: vi.fn(async () => {
      if (failure) throw failure;
    }),
  }) as unknown as Consumer & { commitOffsets: ReturnType<typeof vi.fn> };

describe('commitLive', () => {
  it('commits the offset after the record', async () => {
    const c = consumer();
    const lost = vi.fn();
    await commitLive(c, 'events', 2, '41', lost);
    expect(c.commitOffsets).toHaveBeenCalledWith([{ topic: 'events', partition: 2, offset: '42' }]);
    expect(lost).not.toHaveBeenCalled();
  });

  it('after an eviction, forgets the partitions and throws the protocol error kafkajs rejoins on, not its wrapper', async () => {
    const lost = vi.fn();
    const error = await commitLive(consumer(evicted()), 'events', 0, '7', lost).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'KafkaJSProtocolError', type: 'UNKNOWN_MEMBER_ID' });
    expect(lost).toHaveBeenCalledTimes(1);
  });

  it('passes any other failure through as it is', async () => {
    const failure = new Error('broker gone');
    const lost = vi.fn();
    await expect(commitLive(consumer(failure), 'events', 0, '7', lost)).rejects.toBe(failure);
    expect(lost).not.toHaveBeenCalled();
  });
});

describe('rejoinCause', () => {
  it('finds a rebalance or eviction error however deep kafkajs wrapped it, and nothing else', () => {
    const generation = Object.assign(new Error('stale'), { type: 'ILLEGAL_GENERATION' });
    expect(rejoinCause(new Error('outer', { cause: new Error('middle', { cause: generation }) }))).toBe(generation);
    expect(rejoinCause(Object.assign(new Error('x'), { type: 'OFFSET_OUT_OF_RANGE' }))).toBeUndefined();
    expect(rejoinCause('not an error')).toBeUndefined();
  });
});

describe('Occasional', () => {
  it('lets one through per period and says how many it held back', () => {
    const o = new Occasional(1_000);
    expect([o.pass(0), o.pass(10), o.pass(999), o.pass(1_000), o.pass(1_500), o.pass(2_000)]).toEqual([0, undefined, undefined, 2, undefined, 1]);
  });
});

describe('stalledReason', () => {
  it('says who stalled on the record and for how long, under a stable code', () => {
    expect(stalledReason({ topic: 't', partition: 1, offset: '9', heldMs: 5_120, budgetMs: 5_000, pid: 321, at: 0 })).toEqual({
      code: 'RECORD_STALLED',
      message: 'process 321 had this record in hand for 5120 ms (budget 5000 ms) and was killed; dead-lettered unhandled',
    });
  });
});
