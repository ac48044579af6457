import { Worker } from 'node:worker_threads';
import { VARIANTS } from './inputs.js';
import { CHUNK, pathOf } from './session.js';
import { SharedProgress } from './shared.js';
import { countsOf, failuresIn, inputsIn, mergeTally, type Failure, type Tally } from './tally.js';
import type { WorkerJob, WorkerMessage } from './worker.js';

export interface RunOptions {
  seconds: number;
  seed: number;
  workers: number;
  /** Inputs per worker at most (the unit test's slice). */
  maxInputs?: number;
  /** A decode slower than this is a failure. */
  limitMs?: number;
  /** A worker whose heartbeat stands still this long is stuck: reported, replaced. */
  hangMs?: number;
  /** End the run at the first failure (tests): no need to wait for more. */
  stopAtFirst?: boolean;
  /** Inputs to try (once each, in one worker) instead of generated ones. */
  inputs?: { target: string; hex: string }[];
}

export interface RunResult {
  seed: number;
  seconds: number;
  limitMs: number;
  tally: Tally;
  failures: number;
  /** The first failure seen (by time), with its input. */
  first: Failure | undefined;
}

const WATCH_EVERY_MS = 100;

/**
 * Runs the harness in worker threads, each watched: a thread whose heartbeat stands
 * still is stuck in a reader; the reader and the input are reported, the thread is
 * terminated and a new one goes on after that input. Returns when all are done.
 */
export async function runFuzz(options: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const hangMs = options.hangMs ?? 5_000;
  const deadline = started + options.seconds * 1000;
  const tally: Tally = {};
  const threads = new Set<Worker>();
  let first: Failure | undefined;
  let stopped = false;
  const failed = (failure: Failure) => {
    first ??= failure;
    if (!options.stopAtFirst || stopped) return;
    stopped = true;
    for (const t of threads) void t.terminate();
  };
  // The built worker, also when this module runs from source (vitest): threads start from plain JavaScript.
  const workerUrl = new URL('../dist/worker.js', import.meta.url);

  const one = (worker: number) =>
    new Promise<void>((resolve, reject) => {
      let tried = 0;
      const launch = (chunk: number, step: number) => {
        const budget = (options.maxInputs ?? Number.MAX_SAFE_INTEGER) - tried;
        const progress = new SharedProgress();
        const job: WorkerJob = {
          seed: options.seed,
          worker,
          chunk,
          step,
          deadline,
          maxInputs: budget,
          limitMs: options.limitMs ?? 10,
          progress: progress.buffer,
          ...(options.inputs ? { inputs: options.inputs } : {}),
        };
        const thread = new Worker(workerUrl, { workerData: job });
        threads.add(thread);
        let names: string[] = [];
        let beat = 0;
        let still = Date.now();
        let next: [number, number] | undefined;
        const watch = setInterval(() => {
          const b = progress.heartbeat();
          if (b !== beat || b === 0) {
            beat = b;
            still = Date.now();
            return;
          }
          if (Date.now() - still < hangMs) return;
          clearInterval(watch);
          const where = progress.where();
          const reader = names[where.reader] ?? `reader #${where.reader}`;
          countsOf(tally, reader).slow++;
          tried++;
          const at = where.step + 1 === CHUNK * VARIANTS && !options.inputs ? ([where.chunk + 1, 0] as const) : ([where.chunk, where.step + 1] as const);
          if (Date.now() < deadline && budget > 1 && (!options.inputs || at[1] < options.inputs.length)) next = [...at];
          failed({
            reader,
            kind: 'slow',
            detail: `did not return within ${hangMs} ms (a hang)`,
            hex: Buffer.from(where.bytes).toString('hex'),
            path: options.inputs ? `given.${where.step}` : pathOf(worker, where.chunk, where.step),
            target: options.inputs?.[where.step]?.target ?? '?',
            mutations: '?',
          });
          void thread.terminate();
        }, WATCH_EVERY_MS);
        thread.on('message', (m: WorkerMessage) => {
          if (m.type === 'readers') names = m.names;
          else if (m.type === 'failure') failed(m.failure);
          else {
            tried += inputsIn(m.tally);
            mergeTally(tally, m.tally);
            if (m.type === 'done') void thread.terminate();
          }
        });
        thread.on('error', (error) => {
          if (!stopped) reject(error);
        });
        thread.on('exit', () => {
          clearInterval(watch);
          threads.delete(thread);
          if (next && !stopped) launch(...next);
          else resolve();
        });
      };
      launch(0, 0);
    });

  await Promise.all(Array.from({ length: options.inputs ? 1 : options.workers }, (_, w) => one(w)));
  return { seed: options.seed, seconds: (Date.now() - started) / 1000, limitMs: options.limitMs ?? 10, tally, failures: failuresIn(tally), first };
}
