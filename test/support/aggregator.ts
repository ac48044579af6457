import { ensureTopics, topicFullName, topicSpecs, type Admin, type Consumer, type Kafka, type Producer, type TopicName } from '@banstream/kafka';
import { eventPartitionKey, tryParseIp } from '@banstream/core';
import { loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type Ban, type RequestEvent, type WindowCount } from '@banstream/schemas';
import { captureLogger, uniqueName, waitUntil } from './infra.js';
import { produceOrFail, testKafka } from './kafka.js';
import { describeProcess, exitWithin, freePort, spawnService, type RunningProcess } from './processes.js';

export const catalog = loadSchemaCatalog();

/** A topic layout of its own for one test. */
export async function testTopics(admin: Admin, partitions: number, replicationFactor = 1): Promise<{ prefix: string; name: (t: TopicName) => string }> {
  const prefix = `${uniqueName('agg')}.`;
  await ensureTopics(admin, topicSpecs({ prefix, partitions, replicationFactor }));
  return { prefix, name: (t) => topicFullName(prefix, t) };
}

/** A client, an admin and an idempotent producer, connected, with a topic layout of the test's own. */
export async function connectWithTopics(brokers: string, partitions: number) {
  const kafka = testKafka(brokers, captureLogger().logger);
  const admin = kafka.admin();
  await admin.connect();
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  return { kafka, admin, producer, topics: await testTopics(admin, partitions) };
}

export interface Aggregator {
  proc: RunningProcess;
  port: number;
  /** Sum over the label sets of `name` (only those whose labels contain `having`, when given). */
  metric(name: string, having?: string): Promise<number>;
}

/** Starts the built aggregator as its own process and waits for /readyz. */
/** Starts the built aggregator on `env.HTTP_PORT` (a free port when not given), waits for /readyz. */
export async function startAggregator(env: Record<string, string>): Promise<Aggregator> {
  const port = env.HTTP_PORT === undefined ? await freePort() : Number(env.HTTP_PORT);
  const proc = spawnService('aggregator', { LOG_LEVEL: 'warn', ...env, HTTP_PORT: String(port) });
  await waitUntil(
    async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200,
    () => `aggregator on ${port} to be ready (${describeProcess(proc)})`,
    60_000,
    100,
  );
  return {
    proc,
    port,
    async metric(name, having) {
      return sumMetric(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), name, having);
    },
  };
}

/** The sum of metric `name` over the series of a Prometheus scrape whose line includes `having`, if given. */
export function sumMetric(text: string, name: string, having?: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || !/^[^{ ]+(\{[^}]*\})? /.test(line) || line.split(/[{ ]/)[0] !== name) continue;
    if (having === undefined || line.includes(having)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** SIGTERM to each; one still running after `ms` gets SIGKILL. */
export async function stopAggregators(running: readonly Aggregator[], ms: number): Promise<void> {
  for (const a of running) {
    a.proc.child.kill('SIGTERM');
    await exitWithin(a.proc, ms).catch(() => a.proc.child.kill('SIGKILL'));
  }
}

let sequence = 0;
export function event(ip: string, timestamp: number, extra: Partial<RequestEvent> = {}): RequestEvent {
  return requestEvent({ eventId: `e${++sequence}`, timestamp, ip, ...extra });
}

/** Publishes events as edges do: batch records keyed by the client network. */
export async function publishEvents(producer: Producer, topic: string, events: readonly RequestEvent[], perRecord = 200): Promise<void> {
  const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
  const byKey = new Map<string, RequestEvent[]>();
  for (const e of events) {
    // An edge would refuse a bad address; tests send one on purpose, under any key.
    const key = tryParseIp(e.ip) ? eventPartitionKey(e.ip) : 'invalid';
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    list.push(e);
  }
  const messages: { key: string; value: Buffer }[] = [];
  for (const [key, list] of byKey) {
    for (let i = 0; i < list.length; i += perRecord) messages.push({ key, value: codec.encode({ events: list.slice(i, i + perRecord) }) });
  }
  for (let i = 0; i < messages.length; i += 500) await produceOrFail(producer, topic, messages.slice(i, i + 500));
}

export async function publishPolicy(producer: Producer, topic: string, spec: Record<string, unknown> & { id: string }, version = 1): Promise<void> {
  const value = catalog.codec(SCHEMA_NAMES.policy).encode({
    id: spec.id,
    version,
    description: 'test policy',
    owner: 'tests',
    mode: (spec.mode as 'enforce' | 'preview' | undefined) ?? 'enforce',
    enabled: true,
    definition: JSON.stringify(spec),
    updatedBy: 'tests',
    updatedAt: Date.now(),
  });
  await produceOrFail(producer, topic, [{ key: spec.id, value }]);
}

/** Reads a whole topic from the beginning and keeps tailing it. */
export class TopicTail<T> {
  readonly records: { key: string; value: T | null; partition: number }[] = [];
  private consumer: Consumer | undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    private readonly decode: (b: Buffer) => T,
  ) {}

  async start(): Promise<this> {
    this.consumer = this.kafka.consumer({ groupId: uniqueName('tail'), maxWaitTimeInMs: 50 });
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ message, partition }) => {
        this.records.push({ key: message.key?.toString() ?? '', value: message.value ? this.decode(message.value) : null, partition });
      },
    });
    return this;
  }

  /** The latest value per key; tombstoned keys are absent. */
  latest(): Map<string, T> {
    const out = new Map<string, T>();
    for (const r of this.records) {
      if (r.value === null) out.delete(r.key);
      else out.set(r.key, r.value);
    }
    return out;
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }
}

export const decodeBan = (b: Buffer): Ban => catalog.codec(SCHEMA_NAMES.ban).decode(b);
export const decodeCount = (b: Buffer): WindowCount => catalog.codec(SCHEMA_NAMES.windowCount).decode(b);

/**
 * The pids the supervisor logged for its workers (all, or worker `index`), oldest
 * first: the aggregator always runs supervised, so its own pid is not the one counting.
 */
export function workerPids(a: Aggregator, index?: number): number[] {
  const pids: number[] = [];
  for (const line of a.proc.output().split('\n')) {
    if (!line.includes('"msg":"worker started"')) continue;
    const entry = JSON.parse(line) as { worker: number; pid: number };
    if (index === undefined || entry.worker === index) pids.push(entry.pid);
  }
  return pids;
}
