import { afterAll, describe, expect, it } from 'vitest';
import { keyPartition } from '@banstream/core';
import { createKafkaSink } from '@banstream/edge';
import type { Admin, Kafka } from '@banstream/kafka';
import { captureLogger, uniqueName, waitUntil } from './support/infra.js';
import { createTopicsLed, testKafka } from './support/kafka.js';
import { partitionStates, startTestCluster, type TestCluster } from './support/cluster.js';

/** Two keys for partitions 0 and 1 of a two-partition topic. */
function keyFor(partition: number): string {
  for (let i = 0; ; i++) if (keyPartition(`10.${i}.0.0/24`, 2) === partition) return `10.${i}.0.0/24`;
}

/** The record values on one partition, from its start to its end now. */
async function partitionValues(kafka: Kafka, admin: Admin, topic: string, partition: number): Promise<string[]> {
  const end = Number((await admin.fetchTopicOffsets(topic)).find((o) => o.partition === partition)!.high);
  if (end === 0) return [];
  const consumer = kafka.consumer({ groupId: uniqueName('leader-move-read'), maxWaitTimeInMs: 100 });
  const values: string[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async (m) => {
      if (m.partition === partition) values.push(m.message.value?.toString() ?? '');
    },
  });
  await waitUntil(() => values.length >= end, `partition ${partition} of ${topic} read to offset ${end}`, 30_000);
  await consumer.disconnect();
  return values;
}

/**
 * kafkajs 2.2.4 keeps one send's answers per broker across its retries, and on a retry
 * sends only to brokers that have not answered yet. A partition whose leader died
 * mid-send and moved to a broker that had already answered for another partition of
 * the same send is then sent nowhere, and send() resolves as if it had been written:
 * the gateway answered 202 for events that never reached Kafka. Here the placement
 * makes the move certain: partition 0 lives on brokers 1 and 3 (unaffected), partition
 * 1's leader is broker 2 and its other replica broker 1, so killing broker 2 moves it to
 * broker 1, which answered for partition 0 while broker 2 was refusing connections.
 * Whether a retry then skips broker 1 depends on timing (in about half the runs kafkajs
 * writes partition 1 itself); either way every record must be there, once.
 */
describe('fault: a partition leader dies mid-send and the partition moves to a broker that already answered', () => {
  let cluster: TestCluster | undefined;
  let admin: Admin | undefined;

  afterAll(async () => {
    await admin?.disconnect();
    await cluster?.down();
  });

  it('the Kafka sink resolves only once every record is written', async () => {
    cluster = await startTestCluster(3);
    const { logger, lines } = captureLogger();
    const kafka = testKafka(cluster.connection.KAFKA_BROKERS, logger);
    admin = kafka.admin();
    await admin.connect();
    const topic = uniqueName('leader-move');
    await createTopicsLed(admin, [
      {
        topic,
        replicaAssignment: [
          { partition: 0, replicas: [1, 3] },
          { partition: 1, replicas: [2, 1] },
        ],
        // Kafka wants as many replicas for every partition: two each, one enough in sync.
        configEntries: [{ name: 'min.insync.replicas', value: '1' }],
      },
    ]);
    await waitUntil(
      async () => {
        const s = await partitionStates(admin!, topic).catch(() => []);
        return s.length === 2 && s[0]!.leader === 1 && s[0]!.isr.length === 2 && s[1]!.leader === 2 && s[1]!.isr.length === 2;
      },
      'partition 0 led by broker 1 and partition 1 by broker 2, fully replicated',
      30_000,
    );

    const sink = createKafkaSink({ kafka, topic, logger, reconnectMs: 100 });
    const [k0, k1] = [keyFor(0), keyFor(1)];
    // Connected, producer id and metadata in hand, both partitions written once.
    await sink.send([
      { key: k0, value: Buffer.from('warm-0') },
      { key: k1, value: Buffer.from('warm-1') },
    ]);

    await cluster.stop(2, 'SIGKILL');
    await sink.send([
      { key: k0, value: Buffer.from('after-kill-0') },
      { key: k1, value: Buffer.from('after-kill-1') },
    ]);
    // The broker admin asks may see the leader move a moment after the sink's.
    const states = await waitUntil(
      async () => {
        const now = await partitionStates(admin!, topic);
        return now[1]!.leader === 1 ? now : undefined;
      },
      'partition 1 moved to broker 1, which answered for partition 0',
      10_000,
    );
    expect(states[1]!.leader).toBe(1);
    // Whether kafkajs resolved without partition 1 (the path the sink's resend is for) depends
    // on when its retry sees the leader move: said, not asserted. What must hold either way is
    // below, every record once; kafka-sink.test.ts pins the resend itself.
    const resent = lines().some((l) => String(l.msg).startsWith('kafka answered the send without some partitions'));
    console.log(`leader move mid-send: ${resent ? 'kafkajs resolved without partition 1, the sink sent it again' : 'kafkajs wrote partition 1 itself'}`);

    expect(await partitionValues(kafka, admin, topic, 0)).toEqual(['warm-0', 'after-kill-0']);
    expect(await partitionValues(kafka, admin, topic, 1)).toEqual(['warm-1', 'after-kill-1']);
    await sink.close();
  }, 120_000);
});
