import type { Admin, Kafka } from 'kafkajs';
import { KeyPartitioner, sendUntilAnswered, waitForTopicLeaders } from '@banstream/kafka';

/**
 * Kafka's own part of a failover, measured beside the floods in the same run: a producer
 * made and used as the gateway's (createKafka's client, idempotent, KeyPartitioner, acks=all,
 * a send repeated for a partition kafkajs answered it without) writes to
 * a partition of its own whose leader is the broker to be killed, with three replicas and
 * min.insync.replicas 2 like the events and bans topics. Right after the kill it writes
 * one record: no flood's ban can come sooner after the kill than that write is
 * acknowledged (a new leader elected, its follower fetching), so it is the failover
 * figure's floor on this machine, in this run.
 */
export class FailoverProbe {
  private constructor(
    private readonly producer: ReturnType<Kafka['producer']>,
    private readonly topic: string,
  ) {}

  /** Creates the probe's topic led by `leader` (the other brokers following) and writes to it until its client is warm. */
  static async start(kafka: Kafka, admin: Admin, topic: string, leader: number, brokers: readonly number[]): Promise<FailoverProbe> {
    const replicas = [leader, ...brokers.filter((b) => b !== leader)];
    if (replicas.length !== 3 || !brokers.includes(leader)) throw new Error(`the probe needs three brokers and their leader, got ${JSON.stringify({ leader, brokers })}`);
    await admin.createTopics({
      topics: [{ topic, replicaAssignment: [{ partition: 0, replicas }], configEntries: [{ name: 'min.insync.replicas', value: '2' }] }],
      waitForLeaders: false,
    });
    await waitForTopicLeaders(admin, [topic]);
    // Retried without limit, as the gateway's producer is: the figure is when Kafka takes the write.
    const producer = kafka.producer({ idempotent: true, retry: { retries: Number.MAX_SAFE_INTEGER }, createPartitioner: KeyPartitioner });
    await producer.connect();
    const probe = new FailoverProbe(producer, topic);
    // Warm, as the gateway's client is: connections open and the partition's leader known.
    for (let i = 0; i < 5; i++) await probe.write();
    return probe;
  }

  /** Writes one record with acks=all; resolves with the ms from `since` to its acknowledgement. */
  async write(since = performance.now()): Promise<number> {
    await sendUntilAnswered((pending) => this.producer.send({ topic: this.topic, acks: -1, messages: pending[0]!.messages }), [{ topic: this.topic, messages: [{ key: 'probe', value: 'probe' }] }]);
    return performance.now() - since;
  }

  async stop(): Promise<void> {
    await this.producer.disconnect();
  }
}
