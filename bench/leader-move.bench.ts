/**
 * npm run bench -- leader-move
 *
 * How soon banstream's Kafka client writes to, and reads from, a partition's new leader
 * once Kafka has elected it: the clients' own part of a broker failover, apart from how
 * long Kafka takes to notice the dead broker (which `failover` measures with the rest).
 * A three-broker cluster of its own (the local stack's code, a temporary folder), one
 * partition with three replicas and min.insync.replicas 2; a producer made as the services
 * make theirs (createKafka, installKafkaPatches, idempotent, acks=all) sends a record
 * every 20 ms and a consumer reads them. Each cycle SIGKILLs the partition's leader,
 * polls the metadata until another broker leads (`moved_ms`, Kafka's part: no write can
 * land before it, the ceiling), notes the first send acknowledged and the first record
 * read after the kill, and restarts the broker.
 */
import { createKafka, installKafkaPatches, waitForTopicLeaders } from '@banstream/kafka';
import { createLogger } from '@banstream/platform';
import { stackDown, stackUp, startKafkaNode, stopKafkaNode } from '../scripts/stack/index.mjs';
import { threeBrokerSettings } from './three-brokers.js';
import { median, note, report, sig } from './lib.js';

const CYCLES = Number(process.env.BENCH_CYCLES ?? 6);
const SEND_GAP_MS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const patches = installKafkaPatches();
  const { dir, settings } = await threeBrokerSettings('leader-move');
  note(`starting a three-broker cluster in ${dir}`);
  const { KAFKA_BROKERS } = await stackUp(settings, () => undefined);
  // Its clients' log on stderr at BENCH_LOG_LEVEL (warn: each crash and retry, to see why a cycle was slow).
  const level = (process.env.BENCH_LOG_LEVEL ?? 'fatal') as Parameters<typeof createLogger>[0]['level'];
  const kafka = createKafka({ clientId: 'bench-leader-move', brokers: KAFKA_BROKERS.split(','), logger: createLogger({ service: 'bench', level, destination: process.stderr }) });
  const admin = kafka.admin();
  const producer = kafka.producer({ idempotent: true });
  const consumer = kafka.consumer({ groupId: `bench-leader-move-${process.pid}`, maxWaitTimeInMs: 100 });
  let sending = true;
  try {
    await admin.connect();
    const topic = `bench-leader-move-${Date.now()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '2' }] }], waitForLeaders: false });
    await waitForTopicLeaders(admin, [topic]);
    const partition = async () => {
      const p = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions[0]!;
      return { leader: p.leader, isr: p.isr.length };
    };
    // Asked again for up to 10 s: a metadata request may fail while a restarted broker rejoins.
    const partitionAnswered = async () => {
      for (let tries = 1; ; tries++) {
        const p = await partition().catch((error: unknown) => {
          if (tries >= 50) throw error;
          return undefined;
        });
        if (p) return p;
        await sleep(200);
      }
    };
    await producer.connect();
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: false });
    let crashes = 0;
    consumer.on(consumer.events.CRASH, () => crashes++);
    const readAt: number[] = [];
    await consumer.run({ eachMessage: async () => void readAt.push(performance.now()) });
    const acknowledgedAt: number[] = [];
    const sender = (async () => {
      while (sending) {
        // A send kafkajs gives up on is followed by the next: the figure is the first acknowledged.
        await producer.send({ topic, acks: -1, messages: [{ value: 'x' }] }).then(
          () => void acknowledgedAt.push(performance.now()),
          () => undefined,
        );
        await sleep(SEND_GAP_MS);
      }
    })();
    while (readAt.length < 20) await sleep(100);

    const cycles: { moved: number; write: number; read: number }[] = [];
    for (let c = 0; c < CYCLES; c++) {
      while ((await partitionAnswered()).isr < 3) await sleep(200);
      await sleep(2_000);
      const victim = (await partitionAnswered()).leader;
      const killedAt = performance.now();
      await stopKafkaNode(settings, victim, 'SIGKILL');
      let movedAt = Number.NaN;
      while (Number.isNaN(movedAt)) {
        if (performance.now() - killedAt > 60_000) throw new Error(`no new leader 60 s after broker ${victim} was killed`);
        const now = await partition().catch(() => undefined);
        if (now !== undefined && now.leader >= 0 && now.leader !== victim) movedAt = performance.now();
        else await sleep(20);
      }
      const after = (times: number[]) => times.find((t) => t > movedAt);
      while ((after(acknowledgedAt) === undefined || after(readAt) === undefined) && performance.now() - killedAt < 60_000) await sleep(50);
      const cycle = { moved: movedAt - killedAt, write: (after(acknowledgedAt) ?? Number.NaN) - movedAt, read: (after(readAt) ?? Number.NaN) - movedAt };
      note(`cycle ${c + 1}: broker ${victim} killed, leader moved after ${Math.round(cycle.moved)} ms, written ${Math.round(cycle.write)} ms and read ${Math.round(cycle.read)} ms later`);
      cycles.push(cycle);
      await startKafkaNode(settings, victim, () => undefined);
    }
    sending = false;
    await sender;
    const of = (k: 'moved' | 'write' | 'read') => cycles.map((c) => c[k]);
    const movedP50 = median(of('moved'));
    report(
      'leader-move',
      {
        brokers: 3,
        dedicated_controllers: settings.kafkaControllers.length,
        replication_factor: 3,
        min_insync_replicas: 2,
        cycles: CYCLES,
        send_gap_ms: SEND_GAP_MS,
        patches,
        measure: "from the new leader's election seen in the metadata (polled every 20 ms) to the first send acknowledged and the first record read after it",
        ceiling: "moved_ms: from the SIGKILL to another broker leading (Kafka's failure detection); no client can write before it",
      },
      {
        moved_ms_p50: sig(movedP50, 3),
        moved_ms_max: sig(Math.max(...of('moved')), 3),
        write_after_move_ms_p50: sig(median(of('write')), 3),
        write_after_move_ms_max: sig(Math.max(...of('write')), 3),
        read_after_move_ms_p50: sig(median(of('read')), 3),
        read_after_move_ms_max: sig(Math.max(...of('read')), 3),
        ratio_written_to_moved_p50: sig((movedP50 + median(of('write'))) / movedP50, 3),
        consumer_crashes: crashes,
      },
    );
  } finally {
    sending = false;
    await consumer.disconnect().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    await stackDown(settings);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
