/**
 * One ceiling round of the ingest benchmark in a process of its own: a bare kafkajs
 * producer (the services' kafkajs patches, a client made as the gateway's is: createKafka)
 * sends the run's Avro batches as records, shaped like the publisher's sends (idempotent,
 * acks all, as many events per send and sends in flight). Its heap holds only the
 * producer and its inputs: measured in the gateway's process, the same producer ran
 * 1.1 to 1.4 times faster on one build than another, after nothing but a different
 * gateway had run there before it (a full collection before each round moved it by 40%).
 * Run by runCeilingProcess; prints events per second as JSON on stdout.
 */
import { fileURLToPath } from 'node:url';
import { eventPartitionKey } from '@banstream/core';
import { EDGE_PUBLISHER_DEFAULTS } from '@banstream/edge';
import { createKafka, installKafkaPatches, KeyPartitioner, parseBrokers, type KafkaSecurity } from '@banstream/kafka';
import { createLogger } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { chunks, runBatches } from '../ingest-load.js';
import { runJsonChild } from '../lib.js';

export interface CeilingJob {
  brokers: string;
  security?: KafkaSecurity;
  topic: string;
  /** The run's inputs (runBatches), made again here as the parent made them. */
  events: number;
  networks: number;
  batch: number;
  t0: number;
}

const SELF = fileURLToPath(import.meta.url);

/** Events per second of one ceiling round, in a fresh node process. */
export async function runCeilingProcess(job: CeilingJob): Promise<number> {
  const { eventsPerS } = await runJsonChild<{ eventsPerS: number }>(SELF, 'BENCH_INGEST_CEILING_JOB', job);
  if (!Number.isFinite(eventsPerS)) throw new Error(`ingest ceiling process printed no rate: ${JSON.stringify(eventsPerS)}`);
  return eventsPerS;
}

async function child(job: CeilingJob): Promise<void> {
  installKafkaPatches();
  const logger = createLogger({ service: 'bench-ingest-ceiling', level: 'warn' });
  const codec = loadSchemaCatalog().codec(SCHEMA_NAMES.requestEventBatch);
  const batches = runBatches(job.events, job.networks, job.batch, job.t0);
  const records = batches.map((events) => ({ key: eventPartitionKey(events[0]!.ip), value: codec.encode({ events }) }));
  const kafka = createKafka({ brokers: parseBrokers(job.brokers), clientId: 'bench-ingest-ceiling', logger, ...(job.security === undefined ? {} : { security: job.security }) });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 5, retry: { retries: Number.MAX_SAFE_INTEGER }, createPartitioner: KeyPartitioner });
  await producer.connect();
  const sends = chunks(records, Math.max(1, Math.floor(EDGE_PUBLISHER_DEFAULTS.maxEventsPerSend / job.batch)));
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < sends.length) await producer.send({ topic: job.topic, acks: -1, messages: sends[next++]! });
  };
  await Promise.all(Array.from({ length: EDGE_PUBLISHER_DEFAULTS.maxInFlight }, worker));
  const ms = performance.now() - started;
  await producer.disconnect();
  process.stdout.write(`${JSON.stringify({ eventsPerS: (job.events / ms) * 1000 })}\n`);
}

const raw = process.env.BENCH_INGEST_CEILING_JOB;
if (raw !== undefined && process.argv[1] === SELF) await child(JSON.parse(raw) as CeilingJob);
