import { describe, expect, it } from 'vitest';
import { fixKafkajsFetchOnLeaderMove, refreshOnUnreachableLeader, SHORT_WAIT_HOLD_MS, SHORT_WAIT_MS } from './leader-move-fetch-fix.js';

const connectionError = () => Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:19094'), { name: 'KafkaJSConnectionError' });

/** A ConsumerGroup with kafkajs's recoverFromFetch for what the patch does not take: it throws (consumerGroup.js). */
function world() {
  const clock = { now: 0 };
  class Group {
    refreshes = 0;
    recovered: unknown[] = [];
    readonly cluster = {
      refreshMetadata: async () => {
        if (this.brokersDown) throw Object.assign(new Error('no broker answers'), { name: 'KafkaJSConnectionError' });
        this.refreshes++;
      },
    };
    brokersDown = false;
    maxWaitTime = 500;
    /** The wait each fetch went with (kafkajs reads maxWaitTime when it sends the request). */
    waits: number[] = [];
    async fetch(_nodeId: number): Promise<unknown[]> {
      this.waits.push(this.maxWaitTime);
      return [];
    }
    async recoverFromFetch(error: unknown): Promise<void> {
      this.recovered.push(error);
      throw error;
    }
  }
  expect(refreshOnUnreachableLeader(Group.prototype, 1, 1_000, () => clock.now, 500)).toBe(true);
  return { clock, group: new Group() };
}

describe('fixKafkajsFetchOnLeaderMove', () => {
  it('patches the installed kafkajs (a kafkajs upgrade that moves recoverFromFetch fails here)', () => {
    expect(fixKafkajsFetchOnLeaderMove()).toBe(true);
    expect(fixKafkajsFetchOnLeaderMove()).toBe(true);
  });

  it('a leader it cannot connect to: refreshes the metadata and returns, so the next fetch goes by the new leaders', async () => {
    const { group } = world();
    await group.recoverFromFetch(connectionError());
    await group.recoverFromFetch(connectionError());
    expect(group.refreshes).toBe(2);
    expect(group.recovered).toEqual([]);
  });

  it('leaves every other error to kafkajs', async () => {
    const { group } = world();
    const other = Object.assign(new Error('offset out of range'), { name: 'KafkaJSOffsetOutOfRange' });
    await expect(group.recoverFromFetch(other)).rejects.toBe(other);
    expect(group.refreshes).toBe(0);
  });

  it('a refresh no broker answers throws, as kafkajs would', async () => {
    const { group } = world();
    group.brokersDown = true;
    await expect(group.recoverFromFetch(connectionError())).rejects.toThrow('no broker answers');
  });

  it('a leader unreachable past the wait goes kafkajs’s way (crash and restart); a later failure starts a new wait', async () => {
    const { clock, group } = world();
    for (clock.now = 0; clock.now <= 1_000; clock.now += 100) await group.recoverFromFetch(connectionError());
    expect(group.recovered).toEqual([]);
    clock.now = 1_100;
    await expect(group.recoverFromFetch(connectionError())).rejects.toThrow('ECONNREFUSED');
    // Every failure after it too, so kafkajs's retries run out and it restarts the consumer.
    clock.now = 1_200;
    await expect(group.recoverFromFetch(connectionError())).rejects.toThrow('ECONNREFUSED');
    expect(group.recovered).toHaveLength(2);
    clock.now = 5_000;
    await group.recoverFromFetch(connectionError());
    expect(group.recovered).toHaveLength(2);
  });

  it('outages apart by more than the gap are runs of their own, however long since the first', async () => {
    const { clock, group } = world();
    // Three broker failures 0.6 s long, 0.6 s apart (the gap is 0.5 s, the wait 1 s): 3 s from the first to the last.
    for (const start of [0, 1_200, 2_400]) for (clock.now = start; clock.now <= start + 600; clock.now += 100) await group.recoverFromFetch(connectionError());
    expect(group.recovered).toEqual([]);
    expect(group.refreshes).toBe(21);
  });

  it('after a failed fetch, fetches wait at most SHORT_WAIT_MS until SHORT_WAIT_HOLD_MS after the last failure, then their own wait', async () => {
    const { clock, group } = world();
    await group.fetch(1);
    // A run of failures (the leader dead), each renewing the hold.
    for (clock.now = 0; clock.now <= 600; clock.now += 100) {
      await group.recoverFromFetch(connectionError());
      await group.fetch(2);
    }
    clock.now = 600 + SHORT_WAIT_HOLD_MS - 1;
    await group.fetch(2);
    clock.now = 600 + SHORT_WAIT_HOLD_MS;
    await group.fetch(2);
    await group.fetch(3);
    expect(group.waits).toEqual([500, ...Array(8).fill(SHORT_WAIT_MS), 500, 500]);
  });

  it('any failed fetch shortens the wait, also one the patch hands to kafkajs', async () => {
    const { group } = world();
    const notLeader = Object.assign(new Error('not the leader'), { name: 'KafkaJSProtocolError', type: 'NOT_LEADER_FOR_PARTITION' });
    await expect(group.recoverFromFetch(notLeader)).rejects.toBe(notLeader);
    await group.fetch(1);
    expect(group.waits).toEqual([SHORT_WAIT_MS]);
  });

  it('a consumer whose own wait is shorter keeps it', async () => {
    const { clock, group } = world();
    group.maxWaitTime = 20;
    await group.recoverFromFetch(connectionError());
    await group.fetch(1);
    clock.now = SHORT_WAIT_HOLD_MS;
    await group.fetch(1);
    expect(group.waits).toEqual([20, 20]);
  });
});
