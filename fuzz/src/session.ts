import fc from 'fast-check';
import { checkEvents } from './check-events.js';
import { checkRecord } from './check-records.js';
import { checkFetch, FETCH } from './fetch.js';
import { encodeInput, EVENTS, inputArbitrary, variantOf, VARIANTS, type Input, type InputSpec } from './inputs.js';
import type { Probe } from './probe.js';
import { mixSeed } from './random.js';
import type { Sut } from './sut.js';

/** Inputs are generated in chunks, each from its own seed: (worker, chunk, index) finds one again. */
export const CHUNK = 256;

const arbitraries = new WeakMap<Sut, fc.Arbitrary<InputSpec>>();

export function chunkOf(sut: Sut, seed: number, worker: number, chunk: number): InputSpec[] {
  let arbitrary = arbitraries.get(sut);
  if (!arbitrary) arbitraries.set(sut, (arbitrary = inputArbitrary(sut)));
  return fc.sample(arbitrary, { seed: mixSeed(seed, worker, chunk), numRuns: CHUNK });
}

/** `worker.chunk.index.variant` of a step (index × VARIANTS + variant) of a chunk, as reports print it. */
export function pathOf(worker: number, chunk: number, step: number): string {
  return `${worker}.${chunk}.${Math.floor(step / VARIANTS)}.${step % VARIANTS}`;
}

/** `worker.chunk.index.variant`, as reports print it. */
export function parsePath(path: string): { worker: number; chunk: number; index: number; variant: number } {
  const [worker, chunk, index, variant] = path.split('.').map(Number);
  if (![worker, chunk, index, variant].every((n) => Number.isInteger(n) && n! >= 0) || index! >= CHUNK || variant! >= VARIANTS) {
    throw new Error(`not a path: ${path} (worker.chunk.index.variant)`);
  }
  return { worker: worker!, chunk: chunk!, index: index!, variant: variant! };
}

export async function inputAt(sut: Sut, seed: number, path: string): Promise<Input> {
  const { worker, chunk, index, variant } = parsePath(path);
  const spec = chunkOf(sut, seed, worker, chunk)[index]!;
  return variantOf(spec, await encodeInput(sut, spec), variant, sut.fingerprints);
}

/** Every reader of the input's record type, on the input (a fetch's readers are async). */
export function checkInput(sut: Sut, input: Input, probe: Probe): void | Promise<void> {
  if (input.target === FETCH) return checkFetch(input.bytes, input.mutations === '-', probe);
  if (input.target === EVENTS) checkEvents(sut, input.bytes, probe);
  else checkRecord(sut, input.target, input.bytes, probe);
}
