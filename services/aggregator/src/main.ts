#!/usr/bin/env node
// Wiring only: configuration, logging, metrics and signals are runService's job.
import { installKafkaPatches } from '@banstream/kafka';
import { runService } from '@banstream/platform';
import { aggregatorEnv, createAggregatorService, stateDirOf } from './service.js';

// Before any Kafka client: kafkajs patched for this process, supervisor and workers alike (docs/decisions/kafkajs-patches.md).
installKafkaPatches();

// The watchdog makes the process a supervisor of AGGREGATOR_WORKERS workers, one included.
await runService({
  name: 'aggregator',
  env: aggregatorEnv,
  create: createAggregatorService,
  workers: (config) => config.AGGREGATOR_WORKERS,
  watchdog: (config) => ({ budgetMs: config.AGGREGATOR_RECORD_BUDGET_MS, stateDir: stateDirOf(config) }),
  // A 64 MiB young generation lets a worker's batches and window updates die young instead of being copied (docs/operations/running.md).
  workerNodeFlags: ['--max-semi-space-size=64'],
});
