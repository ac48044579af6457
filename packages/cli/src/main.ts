#!/usr/bin/env node
// The `banstream` command. Wiring only: the commands are in commands/, the dispatch in cli.ts.
import { run } from './cli.js';

const interrupted = new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
const code = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, now: Date.now, interrupted });
process.exitCode = code;
// Let stdout drain, then leave even if a poll timer is still pending.
process.stdout.write('', () => process.exit(code));
