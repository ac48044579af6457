import { describe, expect, it, vi } from 'vitest';
import { EventEmitter } from 'node:events';
import type { Consumer } from '@banstream/kafka';
import { Occasional } from '@banstream/platform';
import { commitLive, rejoinCause, stageCommits, stalledReason } from './context.js';

/** What kafkajs throws when a commit reaches a group that evicted this member: its retrier's wrapper around the protocol error. */
function evicted(): Error {
  const protocol = Object.assign(new Error('The coordinator is not aware of this member'), { name: 'KafkaJSProtocolError', type: 'UNKNOWN_MEMBER_ID' });
  return Object.assign(new Error(protocol.message, { cause: protocol }), { name: 'KafkaJSNonRetriableError' });
}

/** A consumer whose commits fail with `failure` and take `answerMs` each; GROUP_JOIN is emitted by `join()`. */
function consumer(failure?: Error, answerMs = 0) {
  const emitter = new EventEmitter();
  const c = {
    events: { GROUP_JOIN: 'consumer.group_join' },
    on: (event: string, listener: () => void) => emitter.on(event, listener),
    commitOffsets: vi.fn(async () => {
      if (answerMs > 0) await new Promise((r) => setTimeout(r, answerMs));
      if (failure) throw failure;
    }),
    join: () => emitter.emit('consumer.group_join'),
  };
  return c as unknown as Consumer & { commitOffsets: ReturnType<typeof vi.fn>; join(): void };
}

describe('commitLive', () => {
  it('commits the offset after the record', async () => {
    const c = consumer();
    const lost = vi.fn();
    await commitLive(stageCommits(c), 'events', 2, '41', lost);
    expect(c.commitOffsets).toHaveBeenCalledWith([{ topic: 'events', partition: 2, offset: '42' }]);
    expect(lost).not.toHaveBeenCalled();
  });

  it('after an eviction, forgets the partitions and throws the protocol error kafkajs rejoins on, not its wrapper', async () => {
    const lost = vi.fn();
    const error = await commitLive(stageCommits(consumer(evicted())), 'events', 0, '7', lost).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'KafkaJSProtocolError', type: 'UNKNOWN_MEMBER_ID' });
    expect(lost).toHaveBeenCalledTimes(1);
  });

  it('passes any other failure through as it is', async () => {
    const failure = new Error('broker gone');
    const lost = vi.fn();
    await expect(commitLive(stageCommits(consumer(failure)), 'events', 0, '7', lost)).rejects.toBe(failure);
    expect(lost).not.toHaveBeenCalled();
  });

  it('an eviction answered after the handler stopped waiting reaches the next handler, which rejoins', async () => {
    const commits = stageCommits(consumer(evicted(), 250));
    const lost = vi.fn();
    await commitLive(commits, 'events', 0, '7', lost);
    expect(lost).not.toHaveBeenCalled();
    await commits.settled();
    const error = await commitLive(commits, 'events', 0, '8', lost).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'KafkaJSProtocolError', type: 'UNKNOWN_MEMBER_ID' });
    expect(lost).toHaveBeenCalledTimes(1);
  });

  it("after the group is joined again, an old generation's late failure is not thrown and its unsent offsets are not committed", async () => {
    const c = consumer(evicted(), 250);
    const commits = stageCommits(c);
    const lost = vi.fn();
    await commitLive(commits, 'events', 0, '7', lost);
    await commitLive(commits, 'events', 1, '3', lost);
    c.join();
    await commits.settled();
    expect(c.commitOffsets).toHaveBeenCalledTimes(1);
    expect(c.commitOffsets).toHaveBeenCalledWith([{ topic: 'events', partition: 0, offset: '8' }]);
    c.commitOffsets.mockImplementation(async () => undefined);
    await commitLive(commits, 'events', 1, '5', lost);
    expect(lost).not.toHaveBeenCalled();
    expect(c.commitOffsets).toHaveBeenLastCalledWith([{ topic: 'events', partition: 1, offset: '6' }]);
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
