#!/usr/bin/env node
// Wiring only: configuration, logging, metrics and signals are runService's job.
import { installKafkaPatches } from '@banstream/kafka';
import { runService } from '@banstream/platform';
import { createIngestService, ingestEnv } from './service.js';

// Before any Kafka client: kafkajs patched for this process, supervisor and workers alike (docs/decisions/kafkajs-patches.md).
installKafkaPatches();
await runService({ name: 'ingest', env: ingestEnv, create: createIngestService });
