import { afterAll, describe, expect, it } from 'vitest';
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
 * A consumer whose group coordinator's broker is killed with SIGKILL, on a cluster of
 * three brokers and three dedicated controllers. kafkajs 2.2.4 kept sending heartbeats
 * and commits to the dead broker until its retries ran out, then crashed and joined the
 * group again (the aggregator rebuilt its windows by replay after that, 3 s in the
 * failover benchmark). With the coordinator-move patch (installKafkaPatches, as every
 * service and this test process install it) it finds the group's new coordinator and
 * goes on as the same member: no crash, no second join, and its commits reach the new
 * coordinator.
 */
describe('fault: the broker of a consumer group coordinator killed with SIGKILL', () => {
  let cluster: TestCluster | undefined;
  let admin: Admin | undefined;
  let consumer: Consumer | undefined;

  afterAll(async () => {
    await consumer?.disconnect().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
    await cluster?.down();
  });

  it('goes on as the same member with the new coordinator: no crash, no rejoin, commits taken', async () => {
    cluster = await startTestCluster(3, '512m', 3);
    const { logger } = captureLogger();
    const kafka = testKafka(cluster.connection.KAFKA_BROKERS, logger);
    admin = kafka.admin();
    await admin.connect();
    const topic = uniqueName('coordinator-move');
    // The topic's one partition led by broker 1, so that only the coordinator moves.
    await admin.createTopics({ waitForLeaders: false, topics: [{ topic, replicaAssignment: [{ partition: 0, replicas: [1, 2, 3] }] }] });
    await waitUntil(async () => (await partitionStates(admin!, topic).catch(() => []))[0]?.leader === 1, 'the topic led by broker 1');
    // Asking for any group's offsets makes Kafka create its offsets topic.
    await waitUntil(
      () =>
        admin!
          .fetchOffsets({ groupId: uniqueName('bootstrap'), topics: [topic] })
          .then(() => true)
          .catch(() => false),
      'an offsets request answered (the offsets topic created)',
    );
    const offsets = await waitUntil(async () => {
      const states = await partitionStates(admin!, OFFSETS_TOPIC).catch(() => []);
      return states.length === OFFSETS_PARTITIONS && states.every((s) => s.leader > 0) ? states : undefined;
    }, 'the offsets topic led');
    // A group whose coordinator is not the topic's leader.
    let groupId = uniqueName('coordinator-move-group');
    while (offsets[offsetsPartition(groupId)]!.leader === 1) groupId = uniqueName('coordinator-move-group');
    const coordinator = offsets[offsetsPartition(groupId)]!.leader;

    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ value: 'before' }] });
    consumer = kafka.consumer({ groupId, sessionTimeout: 30_000, heartbeatInterval: 500, maxWaitTimeInMs: 100 });
    const seen: string[] = [];
    const crashes: string[] = [];
    let joins = 0;
    consumer.on(consumer.events.CRASH, ({ payload }) => crashes.push(String(payload.error)));
    consumer.on(consumer.events.GROUP_JOIN, () => joins++);
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value?.toString() ?? '') });
    await waitUntil(() => seen.includes('before'), 'the first record read');
    expect(joins).toBe(1);

    await cluster.stop(coordinator, 'SIGKILL');
    // kafkajs commits after each batch it processed, once; a commit made before Kafka
    // moved the group fails and waits for the next batch. So records keep coming, one
    // every 300 ms, until a commit has reached the group's new coordinator.
    let sent = 0;
    const committed = async () => Number((await admin!.fetchOffsets({ groupId, topics: [topic] }).catch(() => []))[0]?.partitions[0]?.offset ?? -1);
    await waitUntil(
      async () => {
        await producer.send({ topic, acks: -1, messages: [{ value: `after-${sent++}` }] }).catch(() => sent--);
        return seen.includes('after-0') && (await committed()) >= 2;
      },
      () => `a record written after the kill read (seen: ${seen.join(',')}) and committed to the new coordinator`,
      30_000,
      300,
    );
    // Several heartbeats later, still the same member of the same group generation.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(crashes, 'the consumer never crashed').toEqual([]);
    expect(joins, 'and never joined again').toBe(1);
    await producer.disconnect();
  }, 180_000);
});
