import { afterAll, describe, expect, it } from 'vitest';
import type { Admin, Consumer } from '@banstream/kafka';
import { captureLogger, uniqueName, waitUntil } from './support/infra.js';
import { createTopicsLed, testKafka } from './support/kafka.js';
import { startTestCluster, type TestCluster } from './support/cluster.js';

const SESSION_MS = 30_000;

/**
 * A consumer whose group coordinator dies crashes when kafkajs's retries run out, and
 * kafkajs restarts it; its LeaveGroup went nowhere, so the group, loaded again by the
 * coordinator that takes it over (here: the same broker, started again), still holds
 * the old member. kafkajs 2.2.4 joined as a new member, and the group assigned nothing
 * until the old member's session (30 s here) had run out. With the member-rejoin patch
 * (installKafkaPatches, as every service and this test process install it) the
 * restarted consumer joins as the member it was and reads again at once.
 */
describe('fault: a consumer group whose coordinator died', () => {
  let cluster: TestCluster | undefined;
  let admin: Admin | undefined;
  let consumer: Consumer | undefined;

  afterAll(async () => {
    await consumer?.disconnect().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
    await cluster?.down();
  });

  it('reads again well within its session once the coordinator is back', async () => {
    cluster = await startTestCluster(1);
    const { logger } = captureLogger();
    const kafka = testKafka(cluster.connection.KAFKA_BROKERS, logger);
    admin = kafka.admin();
    await admin.connect();
    const topic = uniqueName('rejoin');
    await createTopicsLed(admin, [{ topic, numPartitions: 1 }]);
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ value: 'before' }] });

    consumer = kafka.consumer({ groupId: uniqueName('rejoin-group'), sessionTimeout: SESSION_MS, heartbeatInterval: 1_000, maxWaitTimeInMs: 100 });
    const seen: string[] = [];
    const crashes: boolean[] = [];
    consumer.on(consumer.events.CRASH, ({ payload }) => crashes.push(payload.restart));
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value?.toString() ?? '') });
    await waitUntil(() => seen.includes('before'), 'the first record read');

    await cluster.stop(1, 'SIGKILL');
    await waitUntil(() => crashes.length > 0, 'the consumer crashed against the dead coordinator', 30_000);
    expect(crashes[0], 'kafkajs restarts it').toBe(true);
    await cluster.start(1);
    const back = Date.now();
    await producer.send({ topic, messages: [{ value: 'after' }] });
    await waitUntil(
      () => seen.includes('after'),
      () => `the record written after the restart read (seen: ${seen.join(',')})`,
      SESSION_MS + 20_000,
    );
    const waited = Date.now() - back;
    console.log(JSON.stringify({ test: 'fault-coordinator-rejoin', session_ms: SESSION_MS, read_again_ms: waited }));
    expect(waited, 'read again without waiting out the old member session').toBeLessThan(SESSION_MS / 2);
    await producer.disconnect();
  }, 150_000);
});
