import { createRequire } from 'node:module';
import { describe, expect, it, vi } from 'vitest';
import { COORDINATOR_RETRY_MS, followKafkajsCoordinatorMoves, joinThroughCoordinatorMove, MOVE_RETRY_BUDGET_MS } from './coordinator-move-fix.js';
import { kafkajsOwn } from './kafkajs-own.js';
import { CONSUMER_GROUP_MODULE } from './member-rejoin-fix.js';

const require = createRequire(import.meta.url);

/** What kafkajs throws for a coordinator still loading the group (its protocol error, retriable). */
const loading = () =>
  Object.assign(new Error("The coordinator is loading and hence can't process requests for this group"), { name: 'KafkaJSProtocolError', type: 'GROUP_LOAD_IN_PROGRESS', retriable: true });

/** A group with ConsumerGroup's joinAndSync answering in turn; the patch on its prototype. */
function joinGroup(answer: (join: number) => Error | undefined) {
  const at: number[] = [];
  const cluster = { connected: true, isConnected: () => cluster.connected };
  class Group {
    readonly cluster = cluster;
    async joinAndSync(): Promise<void> {
      at.push(Date.now());
      const refusal = answer(at.length);
      if (refusal) throw refusal;
    }
  }
  expect(joinThroughCoordinatorMove(Group.prototype)).toBe(true);
  return { Group, at, cluster };
}

describe('joinThroughCoordinatorMove', () => {
  it('a join answered "loading" or "not available" is tried again, COORDINATOR_RETRY_MS apart, until the coordinator serves the group, not a crash', async () => {
    const answers: (Error | undefined)[] = [loading(), Object.assign(new Error('not available'), { type: 'GROUP_COORDINATOR_NOT_AVAILABLE' })];
    const { Group, at } = joinGroup((n) => answers[n - 1]);
    await new Group().joinAndSync();
    expect(at).toHaveLength(3);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!, `join ${i + 1}`).toBeGreaterThanOrEqual(COORDINATOR_RETRY_MS - 5);
  });

  it('any other join error reaches kafkajs at once (a refusal, a rebalance, an eviction), and so does "loading" once the consumer is disconnected', async () => {
    for (const type of ['GROUP_AUTHORIZATION_FAILED', 'REBALANCE_IN_PROGRESS', 'UNKNOWN_MEMBER_ID', 'NOT_COORDINATOR_FOR_GROUP']) {
      const answer = Object.assign(new Error(type), { type });
      const { Group, at } = joinGroup(() => answer);
      await expect(new Group().joinAndSync(), type).rejects.toBe(answer);
      expect(at, type).toHaveLength(1);
    }
    const { Group, at, cluster } = joinGroup(() => loading());
    cluster.connected = false;
    await expect(new Group().joinAndSync()).rejects.toMatchObject({ type: 'GROUP_LOAD_IN_PROGRESS' });
    expect(at).toHaveLength(1);
  });

  it(`a coordinator loading for more than ${MOVE_RETRY_BUDGET_MS} ms: the join's last answer reaches kafkajs`, async () => {
    vi.useFakeTimers();
    try {
      const thrown: Error[] = [];
      const { Group, at } = joinGroup(() => thrown[thrown.push(loading()) - 1]);
      const join = new Group().joinAndSync();
      const settled = expect(join).rejects.toSatisfy((e) => e === thrown.at(-1) && thrown.length > 1);
      await vi.advanceTimersByTimeAsync(MOVE_RETRY_BUDGET_MS + COORDINATOR_RETRY_MS);
      await settled;
      expect(at).toHaveLength(MOVE_RETRY_BUDGET_MS / COORDINATOR_RETRY_MS + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('kafkajs\'s own ConsumerGroup gives up on a join answered "loading" (the consumer crashes); patched, it joins again', async () => {
    expect(followKafkajsCoordinatorMoves()).toBe(true);
    const stop = Object.assign(new Error('stop here'), { name: 'KafkaJSNonRetriableError', retriable: false });
    const made = () => {
      const answers = [loading(), stop];
      const coordinator = {
        joins: 0,
        async joinGroup(): Promise<never> {
          throw answers[coordinator.joins++];
        },
      };
      const log = { info() {}, debug() {}, warn() {}, error() {} };
      const options = {
        retry: { retries: 0 },
        cluster: { findGroupCoordinator: async () => coordinator, isConnected: () => true },
        groupId: 'g',
        topics: ['t'],
        topicConfigurations: {},
        logger: { namespace: () => log },
        instrumentationEmitter: { emit() {} },
        assigners: [],
        sessionTimeout: 30_000,
        rebalanceTimeout: 60_000,
      };
      return { coordinator, options };
    };
    type Group = new (options: object) => { joinAndSync(): Promise<void> };
    const own = made();
    const Unpatched = kafkajsOwn<Group>(CONSUMER_GROUP_MODULE);
    await expect(new Unpatched(own.options).joinAndSync()).rejects.toMatchObject({ type: 'GROUP_LOAD_IN_PROGRESS' });
    expect(own.coordinator.joins).toBe(1);
    const patched = made();
    const Patched = require(CONSUMER_GROUP_MODULE) as Group;
    await expect(new Patched(patched.options).joinAndSync()).rejects.toBe(stop);
    expect(patched.coordinator.joins, 'joined again after the "loading" answer').toBe(2);
  });
});
