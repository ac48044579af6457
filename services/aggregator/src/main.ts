#!/usr/bin/env node
// Wiring only: configuration, logging, metrics and signals are runService's job.
import { runService } from '@banstream/platform';
import { aggregatorEnv, createAggregatorService } from './service.js';

await runService({ name: 'aggregator', env: aggregatorEnv, create: createAggregatorService, workers: (config) => config.AGGREGATOR_WORKERS });
