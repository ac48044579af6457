#!/usr/bin/env node
// npm run bench -- NAME: runs bench/NAME.bench.ts with tsx and --expose-gc (heap deltas
// need a full collection). `npm run bench` without a name runs every benchmark, one
// after another (they would disturb each other in parallel), keeps going past one
// that fails, and ends with the Performance table (bench/table.mjs) of the results.
// Each benchmark writes bench/results/NAME.json and prints it as its last stdout line.
// Benchmarks that use Kafka or Redis need them up: `npm run stack:up` (or KAFKA_BROKERS
// and REDIS_URL), and some run the compiled services: `npm run build` first.
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

function run(name, args) {
  const result = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(benchDir, `${name}.bench.ts`), ...args], { stdio: 'inherit', cwd: join(benchDir, '..') });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

const [name, ...rest] = process.argv.slice(2);
if (name === undefined) {
  const failed = [];
  for (const each of available) {
    const started = Date.now();
    process.stderr.write(`\n[bench] === ${each} ===\n`);
    if (run(each, []) !== 0) failed.push(each);
    process.stderr.write(`[bench] ${each} took ${Math.round((Date.now() - started) / 1000)} s\n`);
  }
  spawnSync(process.execPath, [join(benchDir, 'table.mjs')], { stdio: 'inherit' });
  if (failed.length > 0) process.stderr.write(`[bench] failed: ${failed.join(', ')}\n`);
  process.exit(failed.length > 0 ? 1 : 0);
}
if (!available.includes(name)) {
  process.stderr.write(`unknown benchmark "${name}"\nusage: npm run bench [-- NAME [args]]\navailable: ${available.join(', ')}\n`);
  process.exit(EX_USAGE);
}
process.exit(run(name, rest));
