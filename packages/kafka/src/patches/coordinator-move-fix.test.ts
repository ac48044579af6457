import { createRequire } from 'node:module';
import { describe, expect, it, vi } from 'vitest';
import { COORDINATOR_RETRY_MS, findCoordinatorBeforeHeartbeat, findCoordinatorForOffsets, followKafkajsCoordinatorMoves, MOVE_RETRY_BUDGET_MS, OFFSET_MANAGER_MODULE } from './coordinator-move-fix.js';
import { kafkajsOwn } from './kafkajs-own.js';

const require = createRequire(import.meta.url);
// kafkajs's own OffsetManager: its getCoordinator looks for the broker by the node id it had.
const KafkajsOffsetManager = require(OFFSET_MANAGER_MODULE) as new (options: object) => { getCoordinator(): Promise<unknown> };

/** Brokers 1 to 3 and a cluster that knows which leads the group now, as kafkajs's Cluster would tell. */
function world() {
  const brokers = new Map(
    [1, 2, 3].map((id) => [
      id,
      {
        id,
        // kafkajs's Broker carries its node id: what its own getCoordinator looks it up by.
        nodeId: id,
        up: true,
        isConnected() {
          return this.up;
        },
      },
    ]),
  );
  /** disowning: brokers up that answer a heartbeat "not the coordinator" (the group moved, or they are loading it). */
  const state = { coordinatorId: 3, lookups: 0, fenced: new Set<number>(), disowning: new Set<number>(), connected: true };
  const cluster = {
    // kafkajs's Cluster.isConnected: false once the consumer disconnects.
    isConnected: () => state.connected,
    // What kafkajs's OffsetManager asks of its cluster when it is made.
    committedOffsets: () => ({}),
    // kafkajs's BrokerPool.findConnectedBroker, and that broker's FindCoordinator.
    brokerPool: {
      async findConnectedBroker() {
        const live = [...brokers.values()].find((b) => b.up)!;
        return {
          async findGroupCoordinator({ groupId, coordinatorType }: { groupId: string; coordinatorType: number }) {
            expect([live.up, groupId, coordinatorType]).toEqual([true, 'g', 0]);
            state.lookups++;
            return { coordinator: { nodeId: state.coordinatorId } };
          },
        };
      },
    },
    // kafkajs's findBroker: by node id, from the metadata; a fenced broker is no longer in it.
    async findBroker({ nodeId }: { nodeId: number }) {
      const b = brokers.get(nodeId)!;
      if (state.fenced.has(nodeId)) throw Object.assign(new Error(`Broker ${nodeId} not found in the cached metadata`), { name: 'KafkaJSBrokerNotFound' });
      if (!b.up) throw Object.assign(new Error('connect ECONNREFUSED'), { name: 'KafkaJSConnectionError' });
      return b;
    },
  };
  /** Broker 3 dies and the group moves to broker 1, as Kafka does once it is fenced. */
  const killCoordinator = () => {
    brokers.get(3)!.up = false;
    state.fenced.add(3);
    state.coordinatorId = 1;
  };
  return { brokers, state, cluster, killCoordinator };
}

/**
 * A class with ConsumerGroup's heartbeat as kafkajs has it, for the world's brokers: sent
 * an interval after the last request, to this.coordinator whatever it is (a dead broker
 * refuses the connection). A class of its own each call: the patch changes its prototype.
 */
function heartbeatGroup(w: ReturnType<typeof world>) {
  const sent: number[] = [];
  class Group {
    coordinator: { id: number; isConnected(): boolean } | null = w.brokers.get(3)!;
    readonly groupId = 'g';
    readonly memberId = 'member-1';
    readonly cluster = w.cluster;
    lastRequest = 0;
    async heartbeat({ interval }: { interval: number }): Promise<void> {
      if (Date.now() < this.lastRequest + interval) return;
      if (!this.coordinator!.isConnected()) throw Object.assign(new Error('connect ECONNREFUSED'), { name: 'KafkaJSConnectionError' });
      if (w.state.disowning.has(this.coordinator!.id)) throw notCoordinator();
      sent.push(this.coordinator!.id);
      this.lastRequest = Date.now();
    }
  }
  return { Group, sent };
}

/** What kafkajs throws for a broker's NOT_COORDINATOR answer (its protocol error, retriable). */
function notCoordinator(): Error {
  return Object.assign(new Error('This is not the correct coordinator for this group'), { name: 'KafkaJSProtocolError', type: 'NOT_COORDINATOR_FOR_GROUP', retriable: true });
}

describe('followKafkajsCoordinatorMoves', () => {
  it('patches the installed kafkajs (a kafkajs upgrade that moves ConsumerGroup or OffsetManager fails here)', () => {
    expect(followKafkajsCoordinatorMoves()).toBe(true);
    expect(followKafkajsCoordinatorMoves()).toBe(true);
  });

  it("kafkajs's own OffsetManager, patched, commits to the coordinator that took the group over (unpatched it asks for broker 3 by id, gone from the metadata once fenced)", async () => {
    expect(followKafkajsCoordinatorMoves()).toBe(true);
    const { brokers, cluster, killCoordinator } = world();
    const manager = new KafkajsOffsetManager({ cluster, coordinator: brokers.get(3), memberAssignment: {}, topicConfigurations: {}, groupId: 'g', generationId: 1, memberId: 'm' });
    expect(await manager.getCoordinator()).toBe(brokers.get(3));
    killCoordinator();
    expect(await manager.getCoordinator()).toBe(brokers.get(1));
    // kafkajs's own, loaded anew from its file (the cached module is patched): the dead broker's id again.
    const Unpatched = kafkajsOwn<typeof KafkajsOffsetManager>(OFFSET_MANAGER_MODULE);
    const own = new Unpatched({ cluster, coordinator: brokers.get(3), memberAssignment: {}, topicConfigurations: {}, groupId: 'g', generationId: 1, memberId: 'm' });
    await expect(own.getCoordinator()).rejects.toThrow(/Broker 3 not found in the cached metadata/);
  });

  it('an offset request whose coordinator died goes to the one that took the group over; a live one is kept without a lookup', async () => {
    const { brokers, state, cluster, killCoordinator } = world();
    class Manager {
      coordinator = brokers.get(3)!;
      readonly groupId = 'g';
      readonly cluster = cluster;
      async getCoordinator(): Promise<unknown> {
        throw new Error('replaced by the patch');
      }
      async commitOffsets(): Promise<void> {}
    }
    expect(findCoordinatorForOffsets(Manager.prototype)).toBe(true);
    const manager = new Manager();
    expect(await manager.getCoordinator()).toBe(brokers.get(3));
    expect(state.lookups).toBe(0);
    killCoordinator();
    expect(await manager.getCoordinator()).toBe(brokers.get(1));
    expect(manager.coordinator).toBe(brokers.get(1));
    expect(await manager.getCoordinator()).toBe(brokers.get(1));
    expect(state.lookups).toBe(1);
  });

  it('a heartbeat whose coordinator died is sent to the new one, as the same member; a live coordinator costs no lookup', async () => {
    const w = world();
    const { state, killCoordinator } = w;
    const { Group, sent } = heartbeatGroup(w);
    expect(findCoordinatorBeforeHeartbeat(Group.prototype)).toBe(true);
    const group = new Group();
    await group.heartbeat({ interval: 0 });
    killCoordinator();
    await group.heartbeat({ interval: 0 });
    expect(sent).toEqual([3, 1]);
    expect(group.memberId).toBe('member-1');
    expect(state.lookups).toBe(1);
  });

  it('before the group has moved, the lookup names the dead broker again and the heartbeat fails as kafkajs would, to be retried', async () => {
    const w = world();
    const { brokers, state } = w;
    const { Group } = heartbeatGroup(w);
    findCoordinatorBeforeHeartbeat(Group.prototype);
    const group = new Group();
    brokers.get(3)!.up = false; // dead, not yet fenced: FindCoordinator still answers 3
    await expect(group.heartbeat({ interval: 0 })).rejects.toThrow(/ECONNREFUSED/);
    expect(group.coordinator, 'kept until a lookup names a broker that answers').toBe(brokers.get(3));
    state.coordinatorId = 2; // moved
    await expect(group.heartbeat({ interval: 0 })).resolves.toBeUndefined();
    expect(group.coordinator).toBe(brokers.get(2));
  });

  it('looks up only when a heartbeat is due (kafkajs sends one an interval after its last), once for the batches that ask at once', async () => {
    const w = world();
    const { brokers, state, killCoordinator } = w;
    const { Group, sent } = heartbeatGroup(w);
    findCoordinatorBeforeHeartbeat(Group.prototype);
    const group = new Group();
    group.lastRequest = Date.now();
    killCoordinator();
    await group.heartbeat({ interval: 60_000 });
    expect(state.lookups, 'not due: no lookup').toBe(0);
    expect(group.coordinator).toBe(brokers.get(3));
    group.lastRequest = 0;
    await Promise.all([group.heartbeat({ interval: 1_000 }), group.heartbeat({ interval: 1_000 }), group.heartbeat({ interval: 1_000 })]);
    expect(state.lookups, 'three batches, one lookup').toBe(1);
    expect(sent[0]).toBe(1);
  });

  it('a heartbeat answered "not the coordinator" by a live broker is skipped, not a rejoin; the next, soon after, goes to the coordinator looked up again', async () => {
    const w = world();
    const { brokers, state } = w;
    const { Group, sent } = heartbeatGroup(w);
    // kafkajs's runner joins the group again on an error isRebalancing() accepts: this one, unpatched.
    const { isRebalancing } = require('kafkajs/src/errors.js') as { isRebalancing(e: unknown): boolean };
    const unpatched = new Group();
    state.disowning.add(3);
    const thrown = await unpatched.heartbeat({ interval: 0 }).catch((e: unknown) => e);
    expect(isRebalancing(thrown), 'kafkajs alone rejoins on it').toBe(true);

    findCoordinatorBeforeHeartbeat(Group.prototype);
    const group = new Group();
    await expect(group.heartbeat({ interval: 60_000 })).resolves.toBeUndefined();
    expect(group.memberId).toBe('member-1');
    expect(sent).toEqual([]);
    expect(group.lastRequest, 'due again COORDINATOR_RETRY_MS later, not a whole interval').toBeGreaterThan(Date.now() - 60_000);
    expect(group.lastRequest).toBeLessThanOrEqual(Date.now() - 60_000 + COORDINATOR_RETRY_MS);
    state.coordinatorId = 2; // the group's new broker, now serving it
    group.lastRequest = 0;
    await group.heartbeat({ interval: 60_000 });
    expect(state.lookups, 'looked up again although broker 3 is connected').toBe(1);
    expect(sent).toEqual([2]);
    expect(group.coordinator).toBe(brokers.get(2));
    await group.heartbeat({ interval: 0 });
    expect(state.lookups, 'a coordinator that serves the group is kept').toBe(1);
  });

  /** kafkajs's OffsetManager.commitOffsets as far as it matters: to getCoordinator(), which may answer NOT_COORDINATOR or another error. */
  function commitManager(w: ReturnType<typeof world>, refuse: (coordinatorId: number) => Error | undefined = (id) => (w.state.disowning.has(id) ? notCoordinator() : undefined)) {
    const committedTo: number[] = [];
    let attempts = 0;
    class Manager {
      coordinator: { id: number; isConnected(): boolean } | null = w.brokers.get(3)!;
      readonly groupId = 'g';
      readonly cluster = w.cluster;
      async getCoordinator(): Promise<{ id: number }> {
        throw new Error('replaced by the patch');
      }
      async commitOffsets(): Promise<void> {
        attempts++;
        const coordinator = await this.getCoordinator();
        const refusal = refuse(coordinator.id);
        if (refusal) throw refusal;
        committedTo.push(coordinator.id);
      }
    }
    expect(findCoordinatorForOffsets(Manager.prototype)).toBe(true);
    return { Manager, committedTo, attempts: () => attempts };
  }

  it('a commit answered "not the coordinator" by a live broker is sent again to the coordinator looked up again, not handed to kafkajs (which would join again)', async () => {
    const w = world();
    const { Manager, committedTo, attempts } = commitManager(w);
    w.state.disowning.add(3);
    w.state.coordinatorId = 2; // moved off broker 3, which is still up
    const started = Date.now();
    await new Manager().commitOffsets();
    expect(committedTo).toEqual([2]);
    expect(attempts()).toBe(2);
    expect(w.state.lookups).toBe(1);
    expect(Date.now() - started, 'sent again COORDINATOR_RETRY_MS later').toBeGreaterThanOrEqual(COORDINATOR_RETRY_MS - 5);
  });

  it('a coordinator still loading the group is asked again until it serves it', async () => {
    const w = world();
    let loading = 3;
    const { Manager, committedTo, attempts } = commitManager(w, () =>
      loading-- > 0 ? Object.assign(new Error('loading'), { name: 'KafkaJSProtocolError', type: 'GROUP_LOAD_IN_PROGRESS', retriable: true }) : undefined,
    );
    await new Manager().commitOffsets();
    expect([attempts(), committedTo]).toEqual([4, [3]]);
  });

  /** A NOT_COORDINATOR answer, a new object each time: which one reaches kafkajs tells the last from the first. */
  const answersMoved = () => {
    const thrown: Error[] = [];
    return { thrown, refuse: () => thrown[thrown.push(notCoordinator()) - 1] };
  };

  it(`a group that does not settle within ${MOVE_RETRY_BUDGET_MS} ms reaches kafkajs with the broker's last answer; kafkajs's own retry after it is not multiplied`, async () => {
    vi.useFakeTimers();
    try {
      const w = world();
      const { thrown, refuse } = answersMoved();
      const { Manager, committedTo, attempts } = commitManager(w, refuse);
      const manager = new Manager();
      const commit = manager.commitOffsets();
      const settled = expect(commit).rejects.toSatisfy((e) => e === thrown.at(-1) && thrown.length > 1);
      await vi.advanceTimersByTimeAsync(MOVE_RETRY_BUDGET_MS + COORDINATOR_RETRY_MS);
      await settled;
      const tries = MOVE_RETRY_BUDGET_MS / COORDINATOR_RETRY_MS + 1;
      expect([attempts(), committedTo]).toEqual([tries, []]);
      // kafkajs's commit retrier tries again soon after: within the same run, once, not another budget.
      await vi.advanceTimersByTimeAsync(COORDINATOR_RETRY_MS);
      await expect(manager.commitOffsets()).rejects.toMatchObject({ type: 'NOT_COORDINATOR_FOR_GROUP' });
      expect(attempts()).toBe(tries + 1);
      // Long after, a new move gets a new run.
      await vi.advanceTimersByTimeAsync(MOVE_RETRY_BUDGET_MS * 2);
      const later = manager.commitOffsets();
      const laterSettled = expect(later).rejects.toMatchObject({ type: 'NOT_COORDINATOR_FOR_GROUP' });
      await vi.advanceTimersByTimeAsync(MOVE_RETRY_BUDGET_MS + COORDINATOR_RETRY_MS);
      await laterSettled;
      expect(attempts()).toBe(2 * tries + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a commit answered "not available" is sent again too; a disconnected consumer is told at once', async () => {
    const w = world();
    let answers: Error[] = [Object.assign(new Error('not available'), { type: 'GROUP_COORDINATOR_NOT_AVAILABLE' })];
    const { Manager, committedTo, attempts } = commitManager(w, () => answers.shift());
    await new Manager().commitOffsets();
    expect([attempts(), committedTo]).toEqual([2, [3]]);
    w.state.connected = false;
    answers = [notCoordinator()];
    const manager = new Manager();
    await expect(manager.commitOffsets()).rejects.toMatchObject({ type: 'NOT_COORDINATOR_FOR_GROUP' });
    expect(attempts()).toBe(3);
  });

  it('a rebalance or an eviction answered to a commit reaches kafkajs at once, not tried again', async () => {
    for (const type of ['REBALANCE_IN_PROGRESS', 'UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION']) {
      const answer = Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type });
      const { Manager, attempts } = commitManager(world(), () => answer);
      await expect(new Manager().commitOffsets(), type).rejects.toBe(answer);
      expect(attempts(), type).toBe(1);
    }
  });

  it('any other commit error reaches kafkajs at once (a rebalance meanwhile: ILLEGAL_GENERATION, on which it joins again)', async () => {
    const w = world();
    const illegal = Object.assign(new Error('generation'), { name: 'KafkaJSProtocolError', type: 'ILLEGAL_GENERATION' });
    const { Manager, attempts } = commitManager(w, () => illegal);
    await expect(new Manager().commitOffsets()).rejects.toBe(illegal);
    expect(attempts()).toBe(1);
  });

  it('after a heartbeat answered "not the coordinator", the next commit looks the coordinator up first', async () => {
    const w = world();
    const { Manager, committedTo } = commitManager(w);
    const { Group } = heartbeatGroup(w);
    findCoordinatorBeforeHeartbeat(Group.prototype);
    const group = Object.assign(new Group(), { offsetManager: new Manager() });
    w.state.disowning.add(3);
    await group.heartbeat({ interval: 0 });
    w.state.coordinatorId = 1;
    await group.offsetManager.commitOffsets();
    expect(committedTo).toEqual([1]);
    expect(w.state.lookups).toBe(1);
  });

  it("kafkajs's own OffsetManager, patched, commits through a NOT_COORDINATOR answer (unpatched, the answer reaches its runner, which joins the group again)", async () => {
    expect(followKafkajsCoordinatorMoves()).toBe(true);
    const w = world();
    const sentTo: number[] = [];
    for (const b of w.brokers.values()) {
      Object.assign(b, {
        async offsetCommit({ groupGenerationId }: { groupGenerationId: number }) {
          expect(groupGenerationId).toBe(1);
          if (w.state.disowning.has(b.id)) throw notCoordinator();
          sentTo.push(b.id);
        },
      });
    }
    const cluster = Object.assign(w.cluster, { refreshMetadata: async () => undefined });
    const options = {
      cluster,
      coordinator: w.brokers.get(3),
      memberAssignment: { t: [0] },
      topicConfigurations: {},
      instrumentationEmitter: { emit: () => undefined },
      groupId: 'g',
      generationId: 1,
      memberId: 'm',
    };
    const topics = [{ topic: 't', partitions: [{ partition: 0, offset: '5' }] }];
    w.state.disowning.add(3);
    w.state.coordinatorId = 2;
    const Unpatched = kafkajsOwn<new (o: object) => { commitOffsets(o: object): Promise<void> }>(OFFSET_MANAGER_MODULE);
    await expect(new Unpatched(options).commitOffsets({ topics })).rejects.toMatchObject({ type: 'NOT_COORDINATOR_FOR_GROUP' });
    const manager = new KafkajsOffsetManager(options) as unknown as { commitOffsets(o: object): Promise<void>; committedOffsets(): Record<string, Record<string, string>> };
    await manager.commitOffsets({ topics });
    expect(sentTo).toEqual([2]);
    expect(manager.committedOffsets().t).toEqual({ 0: '5' });
  });

  it('any other heartbeat error still reaches kafkajs (a rebalance, an eviction: it joins again)', async () => {
    const w = world();
    const { Group } = heartbeatGroup(w);
    findCoordinatorBeforeHeartbeat(Group.prototype);
    const rebalancing = Object.assign(new Error('The group is rebalancing'), { name: 'KafkaJSProtocolError', type: 'REBALANCE_IN_PROGRESS' });
    Group.prototype.heartbeat = ((patched) =>
      async function (this: InstanceType<typeof Group>, options: { interval: number }) {
        await patched.call(this, options);
        throw rebalancing;
      })(Group.prototype.heartbeat);
    await expect(new Group().heartbeat({ interval: 0 })).rejects.toBe(rebalancing);
  });

  it('leaves a prototype of another shape alone', () => {
    expect(findCoordinatorBeforeHeartbeat({})).toBe(false);
    expect(findCoordinatorForOffsets({ getCoordinator: 1 })).toBe(false);
  });
});
