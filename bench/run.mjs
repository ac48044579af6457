#!/usr/bin/env node
// npm run bench -- NAME: runs bench/NAME.bench.ts with tsx and --expose-gc (heap deltas
// need a full collection). Builds nothing: tsx compiles the TypeScript sources directly.
// Each benchmark writes bench/results/NAME.json and prints it as its last stdout line.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const EX_USAGE = 64;
const benchDir = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(benchDir)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .sort();

const [name, ...rest] = process.argv.slice(2);
if (name === undefined || !available.includes(name)) {
  const what = name === undefined ? 'no benchmark name given' : `unknown benchmark "${name}"`;
  process.stderr.write(`${what}\nusage: npm run bench -- NAME [args]\navailable: ${available.join(', ')}\n`);
  process.exit(EX_USAGE);
}

const result = spawnSync(
  process.execPath,
  ['--expose-gc', '--import', 'tsx', join(benchDir, `${name}.bench.ts`), ...rest],
  { stdio: 'inherit', cwd: join(benchDir, '..') },
);
if (result.error) throw result.error;
process.exit(result.status ?? 1);
