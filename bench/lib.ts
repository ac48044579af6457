/**
 * Shared helpers for benchmarks: machine facts, robust statistics, the result file.
 * A benchmark reports; it never judges (no thresholds, no exit codes for "too slow").
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** For a spawned service or helper: its output goes to stderr, so the result stays the last line of stdout. */
export const CHILD_STDIO: ['ignore', number, number] = ['ignore', 2, 2];

export interface Machine {
  cores: number;
  node: string;
  cpu: string;
}

export type Figures = Record<string, number>;

export interface BenchResult {
  name: string;
  machine: Machine;
  params: Record<string, unknown>;
  figures: Figures;
}

export function machine(): Machine {
  return { cores: availableParallelism(), node: process.version, cpu: cpus()[0]?.model.trim() ?? 'unknown' };
}

function sorted(xs: readonly number[]): number[] {
  if (xs.length === 0) throw new Error('no samples');
  return [...xs].sort((a, b) => a - b);
}

export function median(xs: readonly number[]): number {
  const s = sorted(xs);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Nearest-rank percentile, p in (0, 100]. */
export function percentile(xs: readonly number[], p: number): number {
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export function min(xs: readonly number[]): number {
  return sorted(xs)[0]!;
}

/** Rounds to `digits` significant digits, so result files stay readable. */
export function sig(x: number, digits = 4): number {
  return x === 0 || !Number.isFinite(x) ? x : Number(x.toPrecision(digits));
}

/** Full collection; the runner starts node with --expose-gc so heap deltas mean something. */
export function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run benchmarks through `npm run bench -- NAME` (needs --expose-gc)');
  for (let i = 0; i < 3; i++) gc();
}

/** JS heap plus ArrayBuffer backing stores, after a full collection. */
export function heapBytes(): number {
  collect();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** A seeded PRNG (sfc32) returning uniform floats in [0, 1); the same seed gives the same stream. */
export function prng(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed | 0;
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  return next;
}

/**
 * The seed a benchmark runs with: the BENCH_SEED environment variable when set (a whole
 * number in [0, 2^32)), so results can be checked on other traces, else `fallback`.
 */
export function benchSeed(fallback: number): number {
  const text = process.env.BENCH_SEED;
  if (text === undefined || text === '') return fallback;
  const seed = Number(text);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`BENCH_SEED must be a whole number in [0, 2^32), got ${text}`);
  return seed;
}

/** Writes bench/results/NAME.json and prints the same JSON as the last line of stdout. */
export function report(name: string, params: Record<string, unknown>, figures: Figures): BenchResult {
  const result: BenchResult = { name, machine: machine(), params, figures };
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'results');
  mkdirSync(dir, { recursive: true });
  const line = JSON.stringify(result);
  writeFileSync(join(dir, `${name}.json`), `${line}\n`);
  process.stdout.write(`${line}\n`);
  return result;
}

/** CPU time (user + system) a process has used, in µs, from Linux's /proc (clock ticks of 10 ms). */
export function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Progress goes to stderr so the result stays the last line of stdout. */
export function note(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/**
 * Runs `file` (a bench module) in a fresh node process with `job` as JSON in the
 * environment variable `jobVar`, and resolves the JSON of the last line it prints. Without
 * the caller's NODE_OPTIONS: a ceiling runs on node's defaults, like the service it is
 * compared with.
 */
export function runJsonChild<T>(file: string, jobVar: string, job: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const { NODE_OPTIONS: _ignored, ...env } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', file], { env: { ...env, [jobVar]: JSON.stringify(job) }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code !== 0) return reject(new Error(`${file} exited with ${code ?? signal}: ${out}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '') as T);
      } catch {
        reject(new Error(`${file} printed no result: ${out}`));
      }
    });
  });
}
