#!/usr/bin/env node
// Wiring only: configuration, logging, metrics and signals are runService's job.
import { runService } from '@banstream/platform';
import { createEnforcerService, enforcerEnv } from './service.js';

await runService({ name: 'enforcer', env: enforcerEnv, create: createEnforcerService });
