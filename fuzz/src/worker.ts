import { parentPort, workerData } from 'node:worker_threads';
import { FETCH } from './fetch.js';
import { encodeInput, EVENTS, variantOf, VARIANTS, type Encoded, type Input } from './inputs.js';
import { Probe } from './probe.js';
import { CHUNK, checkInput, chunkOf, pathOf } from './session.js';
import { SharedProgress } from './shared.js';
import { buildSut, type Sut } from './sut.js';
import { countsOf, MUTATED_EVENTS, MUTATED_FETCHES, MUTATED_OTHERS, type Failure, type Tally } from './tally.js';

/** What the runner gives a worker thread. */
export interface WorkerJob {
  seed: number;
  worker: number;
  /** Where to start (after a hang, the input after the one that hung): a chunk, and a step in it (index × VARIANTS + variant). */
  chunk: number;
  step: number;
  /** Date.now() at which to stop. */
  deadline: number;
  /** Inputs to try at most (this worker). */
  maxInputs: number;
  limitMs: number;
  progress: SharedArrayBuffer;
  /** Inputs to try instead of generated ones (regression tests): each is tried once. */
  inputs?: { target: string; hex: string }[];
}

export type WorkerMessage = { type: 'readers'; names: string[] } | { type: 'tally'; tally: Tally } | { type: 'failure'; failure: Failure } | { type: 'done'; tally: Tally };

const REPORT_EVERY_MS = 1_000;

async function run(job: WorkerJob, post: (m: WorkerMessage) => void): Promise<void> {
  const progress = new SharedProgress(job.progress);
  const names: string[] = [];
  const ids = new Map<string, number>();
  const announce = (reader: string) => {
    let id = ids.get(reader);
    if (id === undefined) {
      ids.set(reader, (id = names.push(reader) - 1));
      post({ type: 'readers', names });
    }
    progress.startReader(id);
  };
  const sut = buildSut();
  let tally: Tally = {};
  let reported = Date.now();
  let tried = 0;
  let failed = false;
  for await (const { chunk, step, input, path } of inputsOf(job, sut)) {
    if (Date.now() >= job.deadline || tried >= job.maxInputs) break;
    progress.startInput(chunk, step, input.bytes);
    const probe = new Probe(tally, BigInt(job.limitMs * 1e6), announce);
    try {
      await checkInput(sut, input, probe);
    } catch (error) {
      // The harness's own code failed on this input: reported with it, not lost in a dead thread.
      probe.fail('harness', 'crashes', error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    }
    if (probe.hasSuspects) await probe.settle();
    if (input.mutations !== '-') countsOf(tally, input.target === EVENTS ? MUTATED_EVENTS : input.target === FETCH ? MUTATED_FETCHES : MUTATED_OTHERS).tried++;
    tried++;
    if (probe.failures.length > 0 && !failed) {
      failed = true;
      const f = probe.failures[0]!;
      post({ type: 'failure', failure: { ...f, hex: input.bytes.toString('hex'), path, target: input.target, mutations: input.mutations } });
    }
    if (Date.now() - reported >= REPORT_EVERY_MS) {
      post({ type: 'tally', tally });
      tally = {};
      reported = Date.now();
    }
  }
  post({ type: 'done', tally });
}

/** The given inputs, else generated ones: chunk after chunk, each record then its mutated variants. */
async function* inputsOf(job: WorkerJob, sut: Sut): AsyncGenerator<{ chunk: number; step: number; input: Input; path: string }> {
  if (job.inputs) {
    for (let step = job.step; step < job.inputs.length; step++) {
      const { target, hex } = job.inputs[step]!;
      yield { chunk: 0, step, input: { target, bytes: Buffer.from(hex, 'hex'), mutations: 'given' }, path: `given.${step}` };
    }
    return;
  }
  for (let chunk = job.chunk; ; chunk++) {
    const specs = chunkOf(sut, job.seed, job.worker, chunk);
    let encoded: Encoded | undefined;
    for (let step = chunk === job.chunk ? job.step : 0; step < CHUNK * VARIANTS; step++) {
      const index = Math.floor(step / VARIANTS);
      const variant = step % VARIANTS;
      if (variant === 0 || encoded === undefined) encoded = await encodeInput(sut, specs[index]!);
      yield { chunk, step, input: variantOf(specs[index]!, encoded, variant, sut.fingerprints), path: pathOf(job.worker, chunk, step) };
    }
  }
}

// Refusals are Errors by design (the reference's, BanstreamErrors) and the report keeps
// only their messages: capturing a stack for each was a large part of a run's time.
Error.stackTraceLimit = 0;
if (parentPort) await run(workerData as WorkerJob, (m) => parentPort!.postMessage(m));
