import type { Admin, Kafka } from 'kafkajs';
import { createKafkaSink, EDGE_PUBLISHER_DEFAULTS, type RecordSink } from '@banstream/edge';
import { waitForTopicLeaders } from '@banstream/kafka';
import type { Logger } from '@banstream/platform';

const RECORD = { key: 'probe', value: Buffer.from('probe') };

/**
 * Kafka's own part of a failover, measured beside the floods in the same run: the
 * gateway's own Kafka sink (createKafkaSink: idempotent, KeyPartitioner, acks=all, a send
 * repeated for a partition kafkajs answered it without), on a client made as the services
 * make theirs, writes to a partition of its own whose leader is the broker to be killed,
 * with three replicas and min.insync.replicas 2 like the events and bans topics. Right
 * after the kill it writes one record: no flood's ban can come sooner after the kill than
 * that write is acknowledged (a new leader elected, its follower fetching), so it is the
 * failover figure's floor on this machine, in this run.
 */
export class FailoverProbe {
  private constructor(private readonly sink: RecordSink) {}

  /** Creates the probe's topic led by `leader` (the other brokers following) and writes to it until its client is warm. */
  static async start(kafka: Kafka, logger: Logger, admin: Admin, topic: string, leader: number, brokers: readonly number[]): Promise<FailoverProbe> {
    const replicas = [leader, ...brokers.filter((b) => b !== leader)];
    if (replicas.length !== 3 || !brokers.includes(leader)) throw new Error(`the probe needs three brokers and their leader, got ${JSON.stringify({ leader, brokers })}`);
    await admin.createTopics({
      topics: [{ topic, replicaAssignment: [{ partition: 0, replicas }], configEntries: [{ name: 'min.insync.replicas', value: '2' }] }],
      waitForLeaders: false,
    });
    await waitForTopicLeaders(admin, [topic]);
    const probe = new FailoverProbe(createKafkaSink({ kafka, topic, logger, reconnectMs: EDGE_PUBLISHER_DEFAULTS.retryBackoffMs }));
    // Warm, as the gateway's client is: connections open and the partition's leader known.
    for (let i = 0; i < 5; i++) await probe.write();
    return probe;
  }

  /** Writes one record; resolves with the ms from `since` to its acknowledgement by every in-sync replica. */
  async write(since = performance.now()): Promise<number> {
    await this.sink.send([RECORD]);
    return performance.now() - since;
  }

  stop(): Promise<void> {
    return this.sink.close();
  }
}
