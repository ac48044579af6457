import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admin, Consumer } from '@banstream/kafka';
import { captureLogger, uniqueName, waitUntil } from './support/infra.js';
import { testKafka } from './support/kafka.js';
import { partitionStates, startTestCluster, type TestCluster } from './support/cluster.js';

/** Kafka's internal offsets topic, and its partitions on the stack (offsets.topic.num.partitions). */
const OFFSETS_TOPIC = '__consumer_offsets';
const OFFSETS_PARTITIONS = 10;

/** The offsets partition, hence the coordinator, of a group: Utils.abs(groupId.hashCode()) % partitions, as Kafka places it. */
function offsetsPartition(groupId: string): number {
  let h = 0;
  for (let i = 0; i < groupId.length; i++) h = (Math.imul(31, h) + groupId.charCodeAt(i)) | 0;
  return (h === -2147483648 ? 0 : Math.abs(h)) % OFFSETS_PARTITIONS;
}

/**
 * A consumer whose group coordinator moves: its broker killed with SIGKILL, or the group's
 * offsets partition moved off a broker that stays up, on a cluster of
 * three brokers and three dedicated controllers. kafkajs 2.2.4 kept sending heartbeats
 * and commits to the dead broker until its retries ran out, then crashed and joined the
 * group again (the aggregator rebuilt its windows by replay after that, 3 s in the
 * failover benchmark). With the coordinator-move patch (installKafkaPatches, as every
 * service and this test process install it) it finds the group's new coordinator and
 * goes on as the same member: no crash, no second join, and its commits reach the new
 * coordinator.
 */
describe('fault: a consumer group coordinator moved, its broker killed with SIGKILL or left up', () => {
  let cluster: TestCluster | undefined;
  let admin: Admin | undefined;
  const consumers: Consumer[] = [];
  const { logger, lines } = captureLogger();
  const kafka = () => testKafka(cluster!.connection.KAFKA_BROKERS, logger);

  beforeAll(async () => {
    cluster = await startTestCluster(3, '512m', 3);
    admin = kafka().admin();
    await admin.connect();
    // Asking for any group's offsets makes Kafka create its offsets topic.
    await waitUntil(
      () =>
        admin!
          .fetchOffsets({ groupId: uniqueName('bootstrap') })
          .then(() => true)
          .catch(() => false),
      'an offsets request answered (the offsets topic created)',
    );
    await offsetsLeaders();
  }, 180_000);

  /** The offsets topic's partitions and their leaders, once every one has a leader. */
  function offsetsLeaders(): Promise<{ partition: number; leader: number }[]> {
    return waitUntil(async () => {
      const states = await partitionStates(admin!, OFFSETS_TOPIC).catch(() => []);
      return states.length === OFFSETS_PARTITIONS && states.every((s) => s.leader > 0) ? states : undefined;
    }, 'the offsets topic led');
  }

  afterAll(async () => {
    for (const c of consumers) await c.disconnect().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
    await cluster?.down();
  });

  /** A topic of one partition led by `leader`, so that only the coordinator moves. */
  async function topicLedBy(leader: number, others: number[]): Promise<string> {
    const topic = uniqueName('coordinator-move');
    await admin!.createTopics({ waitForLeaders: false, topics: [{ topic, replicaAssignment: [{ partition: 0, replicas: [leader, ...others] }] }] });
    await waitUntil(async () => (await partitionStates(admin!, topic).catch(() => []))[0]?.leader === leader, `the topic led by broker ${leader}`);
    return topic;
  }

  /** A group whose coordinator (its offsets partition's leader) is not broker `not`. */
  async function groupAwayFrom(not: number): Promise<{ groupId: string; coordinator: number }> {
    const offsets = await offsetsLeaders();
    let groupId = uniqueName('coordinator-move-group');
    while (offsets[offsetsPartition(groupId)]!.leader === not) groupId = uniqueName('coordinator-move-group');
    return { groupId, coordinator: offsets[offsetsPartition(groupId)]!.leader };
  }

  /** A consumer of `topic` in `groupId`, committing after each batch (kafkajs's autoCommit), with what it read, its crashes and its joins. */
  async function member(groupId: string, topic: string, heartbeatInterval: number) {
    const consumer = kafka().consumer({ groupId, sessionTimeout: 30_000, heartbeatInterval, maxWaitTimeInMs: 100 });
    consumers.push(consumer);
    const seen: string[] = [];
    const crashes: string[] = [];
    const state = { joins: 0 };
    consumer.on(consumer.events.CRASH, ({ payload }) => crashes.push(String(payload.error)));
    consumer.on(consumer.events.GROUP_JOIN, () => state.joins++);
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value?.toString() ?? '') });
    return { seen, crashes, state };
  }

  /**
   * A member of a new group, reading a topic of its own led by broker 1 (so that only the
   * coordinator moves) and coordinated by another broker, once it has read the topic's
   * first record and joined once.
   */
  async function memberReading(heartbeatInterval: number) {
    const topic = await topicLedBy(1, [2, 3]);
    const { groupId, coordinator } = await groupAwayFrom(1);
    const producer = kafka().producer();
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ value: 'before' }] });
    await producer.disconnect();
    const reading = await member(groupId, topic, heartbeatInterval);
    await waitUntil(() => reading.seen.includes('before'), 'the first record read');
    expect(reading.state.joins).toBe(1);
    return { topic, groupId, coordinator, ...reading };
  }

  /** Writes a record every 300 ms until one written after the move is read and an offset past it committed to the group's coordinator. */
  async function readAndCommittedAfterMove(groupId: string, topic: string, seen: string[]): Promise<void> {
    const producer = kafka().producer();
    await producer.connect();
    // kafkajs commits after each batch it processed, once; a commit made before Kafka
    // moved the group fails and waits for the next batch. So records keep coming until a
    // commit has reached the group's new coordinator.
    let sent = 0;
    const committed = async () => Number((await admin!.fetchOffsets({ groupId, topics: [topic] }).catch(() => []))[0]?.partitions[0]?.offset ?? -1);
    try {
      await waitUntil(
        async () => {
          await producer.send({ topic, acks: -1, messages: [{ value: `after-${sent++}` }] }).catch(() => sent--);
          return seen.includes('after-0') && (await committed()) >= 2;
        },
        () => `a record written after the move read (seen: ${seen.join(',')}) and committed to the new coordinator`,
        30_000,
        300,
      );
    } finally {
      await producer.disconnect();
    }
  }

  /** kafkajs logs why it joins again; the assertion's message names it. */
  function rejoinReasons(groupId: string): string {
    const reasons = lines()
      .filter((l) => l.groupId === groupId && /join|rebalanc|coordinator/i.test(String(l.msg)))
      .map((l) => `${String(l.msg)}: ${String(l.error ?? '')}`);
    return reasons.join('; ') || 'no reason logged';
  }

  it('a group moved off a live broker: a commit answered "not the coordinator" is sent to the new one, as the same member, no rejoin', async () => {
    // Heartbeats far apart: the first request to reach the old coordinator after the move is a commit.
    const { topic, groupId, coordinator, seen, crashes, state } = await memberReading(25_000);

    // The group's offsets partition moved to the two other brokers: Kafka elects one of them
    // its leader, and the old coordinator, still up, answers NOT_COORDINATOR.
    const partition = offsetsPartition(groupId);
    const others = [1, 2, 3].filter((b) => b !== coordinator);
    const logged = lines().length;
    await admin!.alterPartitionReassignments({ topics: [{ topic: OFFSETS_TOPIC, partitionAssignment: [{ partition, replicas: others }] }] });
    await waitUntil(async () => others.includes((await partitionStates(admin!, OFFSETS_TOPIC))[partition]!.leader), 'the group moved to another broker');
    await readAndCommittedAfterMove(groupId, topic, seen);
    // The case under test happened: a commit met the move (kafkajs logs each broker's error answer).
    const movedAnswers = lines()
      .slice(logged)
      .filter((l) => String(l.msg).startsWith('Response OffsetCommit') && /not the correct coordinator|loading|not available/i.test(String(l.error)));
    expect(movedAnswers.length, 'a commit answered that the group moved').toBeGreaterThan(0);
    // A while later, still the same member of the same group generation.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(crashes, 'the consumer never crashed').toEqual([]);
    expect(state.joins, `and never joined again (${rejoinReasons(groupId)})`).toBe(1);
  }, 120_000);

  it('goes on as the same member with the new coordinator: no crash, no rejoin, commits taken', async () => {
    const { topic, groupId, coordinator, seen, crashes, state } = await memberReading(500);

    await cluster!.stop(coordinator, 'SIGKILL');
    await readAndCommittedAfterMove(groupId, topic, seen);
    // Several heartbeats later, still the same member of the same group generation.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(crashes, 'the consumer never crashed').toEqual([]);
    expect(state.joins, `and never joined again (${rejoinReasons(groupId)})`).toBe(1);
  }, 180_000);
});
