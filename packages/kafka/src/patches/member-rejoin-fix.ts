import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 restarts a crashed consumer (retries run out: its group coordinator or a
 * partition leader died) with a new ConsumerGroup, which joins as a new member. Its
 * LeaveGroup on the way out went to the dead coordinator and was lost, so the group
 * still holds the old member: the coordinator that takes the group over waits for it to
 * rejoin, or for its whole session (10 s here) to expire, before it assigns anything.
 * Every consumer whose coordinator was on a killed broker (the aggregator's, the
 * enforcers' ban feeds) read nothing for that long after Kafka had already moved on.
 *
 * The Java client keeps its member id across such errors. This does the same: a consumer
 * (kafkajs's Cluster, one per consumer and kept across its restarts) remembers the member
 * id its group last gave it, and a ConsumerGroup that starts without one joins with it;
 * a group that has forgotten it answers UNKNOWN_MEMBER_ID, and kafkajs then joins afresh
 * as before. A LeaveGroup the coordinator took forgets it. Applied once per process by
 * installKafkaPatches().
 */

/** The fields of kafkajs's ConsumerGroup the patch reads (src/consumer/consumerGroup.js). */
export interface ConsumerGroupState {
  groupId: string;
  memberId: string | null;
  cluster: object;
  joinAndSync(): Promise<void>;
  leave(): Promise<void>;
}

const require = createRequire(import.meta.url);
export const CONSUMER_GROUP_MODULE = 'kafkajs/src/consumer/consumerGroup.js';
let applied = false;

/** Patches kafkajs's ConsumerGroup; returns whether it is patched (false: not the shape a unit test pins). */
export function keepKafkajsMemberAcrossRestarts(): boolean {
  if (applied) return true;
  applied = rejoinAsSameMember(kafkajsConsumerGroupPrototype());
  return applied;
}

/** The patch on any prototype with ConsumerGroup's shape (the unit test's too). */
export function rejoinAsSameMember(proto: object): boolean {
  const p = proto as Partial<ConsumerGroupState>;
  const { joinAndSync, leave } = p;
  if (typeof joinAndSync !== 'function' || typeof leave !== 'function') return false;
  /** Per consumer (its Cluster): group id -> the member id the group last gave it. */
  const members = new WeakMap<object, Map<string, string>>();
  const of = (cluster: object) => {
    let m = members.get(cluster);
    if (!m) members.set(cluster, (m = new Map()));
    return m;
  };
  p.joinAndSync = async function joinAndSyncAsBefore(this: ConsumerGroupState): Promise<void> {
    const known = of(this.cluster);
    if (!this.memberId) this.memberId = known.get(this.groupId) ?? null;
    await joinAndSync.call(this);
    if (this.memberId) known.set(this.groupId, this.memberId);
  };
  p.leave = async function leaveAndForget(this: ConsumerGroupState): Promise<void> {
    await leave.call(this);
    // Reached only when the coordinator took the LeaveGroup (kafkajs throws otherwise).
    of(this.cluster).delete(this.groupId);
  };
  return true;
}

export function kafkajsConsumerGroupPrototype(): object {
  return (require(CONSUMER_GROUP_MODULE) as { prototype: object }).prototype;
}
