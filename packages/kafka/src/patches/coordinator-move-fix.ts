import { createRequire } from 'node:module';
import { kafkajsConsumerGroupPrototype } from './member-rejoin-fix.js';
import { FailureRuns } from './failure-runs.js';

/**
 * kafkajs 2.2.4 finds a consumer group's coordinator when the member joins, and keeps it:
 * the heartbeat goes to that broker for as long as the member lives, and the offset
 * manager, once its connection is gone, looks for the broker by the same node id. When
 * the coordinator's broker dies, every heartbeat and every commit fails (connection
 * refused; "Broker N not found in the cached metadata" once it is fenced) although Kafka
 * moved the group to another broker (within a second with dedicated controllers): the
 * retries run out, the consumer crashes and joins again. The aggregator then rebuilds its partitions' windows by replay
 * (3 s more before a flood's ban in the failover benchmark), the sidecars' feeds stop
 * reading until the crash (19 s).
 *
 * The Java client looks the coordinator up again when its connection is lost
 * (`markCoordinatorUnknown`) and goes on as the same member of the same generation.
 * This does the same for a lost connection: a heartbeat (when due) or an offset request
 * whose coordinator is not connected sends one FindCoordinator to a connected broker
 * and connects to the broker it names: the dead one until Kafka has moved the group, so
 * the request fails as before and kafkajs's own retries ask again; the new one after.
 * No retries of its own, and not kafkajs's findGroupCoordinator: it retries each
 * refused connection, and its search (BrokerPool.withBroker) fails at once when it
 * draws a dead broker first and repeats COORDINATOR_NOT_AVAILABLE answers 2.7 s per
 * broker, inside every heartbeat. A connected coordinator is used as before, at no cost.
 *
 * A heartbeat answered "not the coordinator" (or "not available", "still loading the
 * group") by a broker that is up is the same move seen from the other side: the broker
 * named was not, or not yet, serving the group. kafkajs takes that answer for a
 * rebalance and joins again; a sidecar's feed then read nothing until the new
 * coordinator had loaded the group and the join was done (the last hop of a failover's
 * ban). The Java client marks the coordinator unknown and goes on; so does this: the
 * heartbeat is skipped, the next one, COORDINATOR_RETRY_MS later, looks the coordinator
 * up again. A real rebalance is then told by the new coordinator (REBALANCE_IN_PROGRESS,
 * UNKNOWN_MEMBER_ID), on which kafkajs joins again as before.
 *
 * Commits and joins answered that the group moved or is loading are tried again, 100 ms
 * apart for up to 2 s, rather than taken for a rebalance or a crash (see findCoordinatorForOffsets and
 * joinThroughCoordinatorMove); every retry of one commit stays in the generation it was
 * made in (commitInOneGeneration).
 *
 * The limit: the consumer still crashes, as before, when Kafka takes longer to move the
 * group than the consumer's retries last (about 3 s, CLIENT_RETRY): a cluster with
 * combined nodes and long sessions. Applied once per process by installKafkaPatches().
 */

/** A kafkajs Broker, as far as the patch uses it. */
interface Coordinator {
  isConnected(): boolean;
}

/** The fields of kafkajs's ConsumerGroup and OffsetManager the patch uses. */
interface GroupMember {
  groupId: string;
  coordinator: Coordinator | null;
  cluster: {
    brokerPool: { findConnectedBroker(): Promise<{ findGroupCoordinator(options: { groupId: string; coordinatorType: number }): Promise<{ coordinator: { nodeId: number } }> }> };
    findBroker(options: { nodeId: number }): Promise<Coordinator>;
    isConnected?(): boolean;
  };
}

const require = createRequire(import.meta.url);
export const OFFSET_MANAGER_MODULE = 'kafkajs/src/consumer/offsetManager/index.js';
let applied = false;

/** Patches kafkajs's ConsumerGroup (heartbeat, joinAndSync, commitOffsets) and OffsetManager; returns whether all are patched. */
export function followKafkajsCoordinatorMoves(): boolean {
  if (applied) return true;
  const groupProto = kafkajsConsumerGroupPrototype();
  const offsetsProto = (require(OFFSET_MANAGER_MODULE) as { prototype: object }).prototype;
  // All or none: a half-applied patch would be harder to reason about than none.
  if (
    !hasShape(groupProto, 'heartbeat') ||
    !hasShape(groupProto, 'joinAndSync') ||
    !hasShape(groupProto, 'commitOffsets') ||
    !hasShape(offsetsProto, 'getCoordinator') ||
    !hasShape(offsetsProto, 'commitOffsets')
  )
    return false;
  applied = findCoordinatorBeforeHeartbeat(groupProto) && joinThroughCoordinatorMove(groupProto) && findCoordinatorForOffsets(offsetsProto) && commitInOneGeneration(groupProto);
  return applied;
}

function hasShape(proto: object, method: string): boolean {
  return typeof (proto as Record<string, unknown>)[method] === 'function';
}

/** Per member (a ConsumerGroup or an OffsetManager): its lookup in flight, shared by the batches that ask at once. */
const lookups = new WeakMap<GroupMember, Promise<Coordinator | null>>();
/** Members whose coordinator answered that the group is not (or not yet) its own: looked up again though connected. */
const disowned = new WeakSet<GroupMember>();

/** kafkajs's names for a broker's answer that it does not serve the group now: it moved, or its new broker is loading it. */
export const COORDINATOR_MOVED = new Set(['NOT_COORDINATOR_FOR_GROUP', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'GROUP_LOAD_IN_PROGRESS']);
/** How soon a heartbeat skipped for such an answer is tried again (Kafka's retry.backoff.ms default). */
export const COORDINATOR_RETRY_MS = 100;

/** The coordinator to use: the one held while its connection lives and it serves the group, else the group's current one. */
function currentCoordinator(member: GroupMember): Promise<Coordinator | null> {
  if (!member.coordinator || (member.coordinator.isConnected() && !disowned.has(member))) return Promise.resolve(member.coordinator);
  let lookup = lookups.get(member);
  if (!lookup) {
    disowned.delete(member);
    lookup = (async () => {
      // Asked of a broker that answers (the Java client asks its least loaded node); coordinatorType 0: a consumer group's.
      const broker = await member.cluster.brokerPool.findConnectedBroker();
      const { coordinator } = await broker.findGroupCoordinator({ groupId: member.groupId, coordinatorType: 0 });
      member.coordinator = await member.cluster.findBroker({ nodeId: coordinator.nodeId });
      return member.coordinator;
    })().finally(() => lookups.delete(member));
    lookups.set(member, lookup);
  }
  return lookup;
}

/**
 * ConsumerGroup.heartbeat: to the group's current coordinator (the unit test's prototype
 * too). kafkajs calls it after every batch and sends only once the interval has passed
 * since its last request (`lastRequest`): the lookup waits for that too, so a dead
 * coordinator costs one lookup a heartbeat, not one a batch.
 */
export function findCoordinatorBeforeHeartbeat(proto: object): boolean {
  const p = proto as { heartbeat?: (this: GroupMember & { lastRequest?: unknown; offsetManager?: GroupMember | null }, options: { interval?: unknown }) => Promise<unknown> };
  const { heartbeat } = p;
  if (typeof heartbeat !== 'function') return false;
  p.heartbeat = async function heartbeatCurrentCoordinator(this: GroupMember & { lastRequest?: unknown; offsetManager?: GroupMember | null }, options: { interval?: unknown }): Promise<unknown> {
    const due = typeof this.lastRequest !== 'number' || typeof options?.interval !== 'number' || Date.now() >= this.lastRequest + options.interval;
    if (due) await currentCoordinator(this);
    try {
      return await heartbeat.call(this, options);
    } catch (error) {
      if (!COORDINATOR_MOVED.has(typeOf(error) ?? '')) throw error;
      // Not a rebalance: the next heartbeat looks the coordinator up again, soon rather than an interval later,
      // and so does the next commit (the offset manager holds a coordinator of its own).
      disowned.add(this);
      if (this.offsetManager) disowned.add(this.offsetManager);
      if (typeof options?.interval === 'number') this.lastRequest = Date.now() - options.interval + COORDINATOR_RETRY_MS;
      return undefined;
    }
  };
  return true;
}

/**
 * How long a run of answers that the group moved (or is loading) is met by trying the
 * commit or join again, COORDINATOR_RETRY_MS apart, before kafkajs is told. One budget
 * per offset manager or group, shared by kafkajs's own retries around them, so that the
 * two do not multiply (kafkajs heartbeats only between batches: a commit retried for
 * long would cost the member its session).
 */
export const MOVE_RETRY_BUDGET_MS = 2_000;

/** kafkajs's name for the broker's answer in `error`, if it carries one. */
function typeOf(error: unknown): string | undefined {
  const type = (error as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' ? type : undefined;
}

/** Per offset manager or group: its runs of "moved" answers (an answer long after the last starts a new one). */
const moveRuns = new FailureRuns(MOVE_RETRY_BUDGET_MS);

/**
 * Whether to try `member`'s request again after an answer that the group moved: within
 * the run's budget, and while its client is connected (a consumer disconnecting is not
 * joined again behind its back). Waits COORDINATOR_RETRY_MS first when so.
 */
async function tryAgainAfterMove(member: { cluster: { isConnected?(): boolean } }): Promise<boolean> {
  if (moveRuns.failed(member, Date.now()) >= MOVE_RETRY_BUDGET_MS || member.cluster.isConnected?.() === false) return false;
  await new Promise((resolve) => setTimeout(resolve, COORDINATOR_RETRY_MS));
  return member.cluster.isConnected?.() !== false;
}

/**
 * ConsumerGroup.joinAndSync: a join answered that the coordinator is loading the group, or
 * is not available, is tried again (a new FindCoordinator, then the join), COORDINATOR_RETRY_MS
 * apart, for up to MOVE_RETRY_BUDGET_MS. kafkajs retries a join answered NOT_COORDINATOR but
 * gives up at once on these two: the consumer crashed and was restarted (the aggregator's
 * feeds at a fresh cluster's start, in the failover benchmark's logs), and a crash
 * releases the aggregator's partitions, whose windows are then rebuilt by replay. The
 * Java client waits and asks again. Any other error reaches kafkajs as before.
 */
export function joinThroughCoordinatorMove(proto: object): boolean {
  const p = proto as { joinAndSync?: (this: { cluster: { isConnected?(): boolean } }) => Promise<unknown> };
  const { joinAndSync } = p;
  if (typeof joinAndSync !== 'function') return false;
  p.joinAndSync = async function joinAndSyncThroughMove(this: { cluster: { isConnected?(): boolean } }): Promise<unknown> {
    for (;;) {
      try {
        return await joinAndSync.call(this);
      } catch (error) {
        if (!JOIN_AGAIN.has(typeOf(error) ?? '') || !(await tryAgainAfterMove(this))) throw error;
      }
    }
  };
  return true;
}

/** The answers to a join that kafkajs gives up on although the group will be served soon (NOT_COORDINATOR it retries itself). */
const JOIN_AGAIN = new Set(['GROUP_COORDINATOR_NOT_AVAILABLE', 'GROUP_LOAD_IN_PROGRESS']);

/** Per commit (the offsets object kafkajs's runner hands to every attempt of it): the offset manager of its first attempt. */
const commitGenerations = new WeakMap<object, unknown>();

/**
 * ConsumerGroup.commitOffsets: every attempt of one commit through the offset manager of
 * its first, hence in the generation it was made in. kafkajs's runner retries a commit
 * that failed (a connection refused, a broker not found while the coordinator moves) by
 * calling this again with the same offsets, and each call took the offset manager there
 * was then: after a rebalance meanwhile, the new generation's, which the coordinator
 * accepts for any partition, also one another member owns now, whose committed offset it
 * would move back. A commit handed over to be sent beside the fetch loop
 * (member-commits.ts) can be in its retries while the member joins again. Such an attempt
 * fails instead, as the old generation's would (ILLEGAL_GENERATION, not retried).
 */
export function commitInOneGeneration(proto: object): boolean {
  const p = proto as { commitOffsets?: (this: { offsetManager?: unknown }, offsets?: unknown) => Promise<unknown> };
  const { commitOffsets } = p;
  if (typeof commitOffsets !== 'function') return false;
  p.commitOffsets = function commitInItsGeneration(this: { offsetManager?: unknown }, offsets?: unknown): Promise<unknown> {
    // Without offsets kafkajs commits what its current offset manager resolved: nothing to pin.
    if (offsets !== null && typeof offsets === 'object') {
      if (!commitGenerations.has(offsets)) commitGenerations.set(offsets, this.offsetManager);
      else if (commitGenerations.get(offsets) !== this.offsetManager) return Promise.reject(staleGeneration());
    }
    return commitOffsets.call(this, offsets);
  };
  return true;
}

/** kafkajs's own error for a request of a generation the group has left behind. */
function staleGeneration(): Error {
  const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
  // 22: ILLEGAL_GENERATION, which kafkajs does not retry.
  return createErrorFromCode(22);
}

/**
 * OffsetManager.getCoordinator (commits, offset fetches): the group's current coordinator,
 * not the same node id again. A commit answered that the group is not (or not yet) its
 * broker's looks the coordinator up again and is sent again, COORDINATOR_RETRY_MS apart,
 * for up to MOVE_RETRY_BUDGET_MS, before kafkajs hears of it: kafkajs takes NOT_COORDINATOR for
 * a rebalance, and an automatic commit so answered after a batch made the member join
 * again (once in a clean-clone run of the coordinator fault test), where the Java client
 * marks the coordinator unknown and goes on. The same offset manager, hence the same
 * generation, for every attempt: a rebalance meanwhile is answered ILLEGAL_GENERATION,
 * which reaches kafkajs at once.
 */
export function findCoordinatorForOffsets(proto: object): boolean {
  const p = proto as { getCoordinator?: (this: GroupMember) => Promise<Coordinator | null>; commitOffsets?: (this: GroupMember, ...args: unknown[]) => Promise<unknown> };
  const { commitOffsets } = p;
  if (typeof p.getCoordinator !== 'function' || typeof commitOffsets !== 'function') return false;
  p.getCoordinator = async function getCurrentCoordinator(this: GroupMember): Promise<Coordinator | null> {
    return currentCoordinator(this);
  };
  p.commitOffsets = async function commitToCurrentCoordinator(this: GroupMember, ...args: unknown[]): Promise<unknown> {
    for (;;) {
      try {
        return await commitOffsets.apply(this, args);
      } catch (error) {
        if (!COORDINATOR_MOVED.has(typeOf(error) ?? '')) throw error;
        disowned.add(this);
        if (!(await tryAgainAfterMove(this))) throw error;
      }
    }
  };
  return true;
}
