#!/usr/bin/env node
// Wiring only: configuration, logging, metrics and signals are runService's job.
import { runService } from '@banstream/platform';
import { createIngestService, ingestEnv } from './service.js';

await runService({ name: 'ingest', env: ingestEnv, create: createIngestService });
