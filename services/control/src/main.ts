#!/usr/bin/env node
// Wiring only: configuration, logging, metrics and signals are runService's job.
import { runService } from '@banstream/platform';
import { controlEnv, createControlService } from './service.js';

await runService({ name: 'control', env: controlEnv, create: createControlService });
