import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { followKafkajsCoordinatorMoves } from './coordinator-move-fix.js';
import { kafkajsOwn } from './kafkajs-own.js';

const require = createRequire(import.meta.url);

describe('commitInOneGeneration', () => {
  const GROUP_MODULE = 'kafkajs/src/consumer/consumerGroup.js';
  /** An offset manager of one generation: what it was asked to commit. */
  const manager = (name: string, fail?: () => Error) => {
    const commits: unknown[] = [];
    return {
      name,
      commits,
      async commitOffsets(offsets: unknown) {
        commits.push(offsets);
        if (fail) throw fail();
      },
    };
  };
  const refused = () => Object.assign(new Error('Connection error: connect ECONNREFUSED'), { name: 'KafkaJSConnectionError', retriable: true });
  /** kafkajs's runner's commitOffsets: its retrier calls the group's commitOffsets with the same offsets each attempt; `between` runs before each retry. */
  const runnerCommit = (commit: (offsets: object) => Promise<unknown>, offsets: object, between: () => void) => {
    const createRetry = require('kafkajs/src/retry/index.js') as (options: object) => (fn: (bail: unknown, n: number) => Promise<unknown>) => Promise<unknown>;
    return createRetry({ initialRetryTime: 1, maxRetryTime: 2, retries: 3 })(async (_bail, n) => {
      if (n > 0) between();
      return commit(offsets);
    });
  };

  it("kafkajs's runner, patched: a commit whose member joined again between its attempts fails as the old generation's, and the new generation never sends it", async () => {
    expect(followKafkajsCoordinatorMoves()).toBe(true);
    const { prototype } = require(GROUP_MODULE) as { prototype: { commitOffsets(this: object, offsets?: object): Promise<unknown> } };
    const old = manager('generation 4', refused);
    const next = manager('generation 5');
    const group = { offsetManager: old as object };
    const offsets = { topics: [{ topic: 'events', partitions: [{ partition: 2, offset: '41' }] }] };
    const error = await runnerCommit(
      (o) => prototype.commitOffsets.call(group, o),
      offsets,
      () => (group.offsetManager = next),
    ).catch((e: unknown) => e);
    // Not retried: kafkajs's retrier hands it on in its wrapper, as for the broker's own ILLEGAL_GENERATION.
    expect(error).toMatchObject({ name: 'KafkaJSNonRetriableError', cause: { type: 'ILLEGAL_GENERATION' } });
    expect(old.commits).toEqual([offsets]);
    expect(next.commits).toEqual([]);
    // A commit made in the new generation goes through its manager; and so does kafkajs's own, without offsets.
    const fresh = { topics: [{ topic: 'events', partitions: [{ partition: 3, offset: '7' }] }] };
    await prototype.commitOffsets.call(group, fresh);
    await prototype.commitOffsets.call(group);
    expect(next.commits).toEqual([fresh, undefined]);
  });

  it("kafkajs's own, loaded anew: the retry went through the new generation's manager, for a partition it may not own", async () => {
    const { prototype } = kafkajsOwn<{ prototype: { commitOffsets(this: object, offsets?: object): Promise<unknown> } }>(GROUP_MODULE);
    const old = manager('generation 4', refused);
    const next = manager('generation 5');
    const group = { offsetManager: old as object };
    const offsets = { topics: [{ topic: 'events', partitions: [{ partition: 2, offset: '41' }] }] };
    await runnerCommit(
      (o) => prototype.commitOffsets.call(group, o),
      offsets,
      () => (group.offsetManager = next),
    );
    expect(next.commits).toEqual([offsets]);
  });

  it('retries in the same generation as before', async () => {
    expect(followKafkajsCoordinatorMoves()).toBe(true);
    const { prototype } = require(GROUP_MODULE) as { prototype: { commitOffsets(this: object, offsets?: object): Promise<unknown> } };
    let failures = 2;
    const same = manager('generation 4', () => {
      failures--;
      return refused();
    });
    const group = { offsetManager: { commitOffsets: (o: unknown) => (failures > 0 ? same.commitOffsets(o) : Promise.resolve(same.commits.push(o))) } };
    const offsets = { topics: [] };
    await runnerCommit(
      (o) => prototype.commitOffsets.call(group, o),
      offsets,
      () => undefined,
    );
    expect(same.commits).toEqual([offsets, offsets, offsets]);
  });
});
