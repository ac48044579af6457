#!/usr/bin/env node
// Wiring only: configuration, logging, metrics and signals are runService's job.
import { runService, type ServiceFactory } from '@banstream/platform/entry';
import { aggregatorEnv, stateDirOf } from './config.js';

/** Run by the workers only: the supervisor, which relays health and metrics, never loads Kafka or the engine. */
async function loadAggregator(): Promise<ServiceFactory<typeof aggregatorEnv>> {
  const { installKafkaPatches } = await import('@banstream/kafka');
  // Before any Kafka client (docs/decisions/kafkajs-patches.md).
  installKafkaPatches();
  return (await import('./service.js')).createAggregatorService;
}

// The watchdog makes the process a supervisor of AGGREGATOR_WORKERS workers, one included.
await runService({
  name: 'aggregator',
  env: aggregatorEnv,
  load: loadAggregator,
  workers: (config) => config.AGGREGATOR_WORKERS,
  watchdog: (config) => ({ budgetMs: config.AGGREGATOR_RECORD_BUDGET_MS, stateDir: stateDirOf(config) }),
  // A 64 MiB young generation lets a worker's batches and window updates die young instead of being copied (docs/operations/running.md).
  workerNodeFlags: ['--max-semi-space-size=64'],
});
