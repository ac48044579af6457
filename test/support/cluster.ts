import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin } from '@banstream/kafka';
import { kafkaNodePid, stackDown, stackSettings, stackUp, startKafkaNode, stopKafkaNode, type StackConnection, type StackSettings } from '../../scripts/stack/index.mjs';
import { freePort, freePortBlock } from './processes.js';

/**
 * A Kafka cluster of the test's own (own folder, own ports, its own Redis too), from the
 * local stack's code: `npm run stack:up -- --brokers N` as a library. Nodes can be
 * killed and started one by one.
 */
export interface TestCluster {
  settings: StackSettings;
  connection: StackConnection;
  /** SIGKILL (a crash) or SIGTERM (a clean stop) of one node; resolves once it is gone. */
  stop(id: number, signal: 'SIGKILL' | 'SIGTERM'): Promise<string>;
  /** Starts a stopped node and waits until it answers. */
  start(id: number): Promise<void>;
  pid(id: number): number | undefined;
  down(): Promise<void>;
}

/** `controllers`: dedicated controller nodes beside the `nodes` brokers (0: every node both). */
export async function startTestCluster(nodes = 3, heap = '512m', controllers = 0): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'banstream-cluster-'));
  const settings = stackSettings({
    BANSTREAM_STACK_DIR: dir,
    BANSTREAM_KAFKA_BROKERS: String(nodes),
    BANSTREAM_KAFKA_CONTROLLERS: String(controllers),
    BANSTREAM_KAFKA_PORT: String(await freePortBlock(nodes)),
    BANSTREAM_KAFKA_CONTROLLER_PORT: String(await freePortBlock(controllers || nodes)),
    BANSTREAM_REDIS_PORT: String(await freePort()),
    BANSTREAM_KAFKA_HEAP: heap,
  });
  const down = async () => {
    await stackDown(settings);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const connection = await stackUp(settings, () => undefined);
    return {
      settings,
      connection,
      stop: (id, signal) => stopKafkaNode(settings, id, signal),
      start: (id) => startKafkaNode(settings, id, () => undefined),
      pid: (id) => kafkaNodePid(settings, id),
      down,
    };
  } catch (error) {
    await down();
    throw error;
  }
}

/** Each partition's leader and in-sync replicas, from the cluster's metadata. */
export async function partitionStates(admin: Admin, topic: string): Promise<{ partition: number; leader: number; isr: number[] }[]> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  return (topics[0]?.partitions ?? []).map((p) => ({ partition: p.partitionId, leader: p.leader, isr: [...p.isr].sort() })).sort((a, b) => a.partition - b.partition);
}
