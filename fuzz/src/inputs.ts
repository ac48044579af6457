import fc from 'fast-check';
import { SCHEMA_NAMES } from '@banstream/schemas';
import { eventOf, valueOf } from './arbitraries.js';
import { encodeFetch, FETCH, fetchSpecArbitrary, mutateFetch, type FetchSpec } from './fetch.js';
import { mutate } from './mutate.js';
import { mixSeed, Rng } from './random.js';
import type { Node } from './reference.js';
import type { Sut } from './sut.js';
import { encodeTraced, type Spot } from './writer.js';

/** One generated record before it is encoded: which record, which writer, the value, how to lay it out. */
export interface InputSpec {
  target: string;
  fingerprint: bigint;
  value: unknown;
  canonical: boolean;
  seed: number;
}

/**
 * Inputs made of each generated record: the record itself (variant 0), then mutated
 * copies, each with mutations of its own. Generating a record costs far more than
 * damaging it, so one record gives several inputs.
 */
export const VARIANTS = 8;

export interface Input {
  target: string;
  bytes: Buffer;
  /** The mutations applied, `-` for none (a valid record). */
  mutations: string;
}

export const EVENTS = SCHEMA_NAMES.requestEventBatch;

/**
 * Events records most of the time (every reader of them runs on each), every other
 * record type besides, and a partition's part of a Kafka fetch (fetch.ts).
 */
export function inputArbitrary(sut: Sut): fc.Arbitrary<InputSpec> {
  const writers = [...sut.writers.values()];
  const forWriter = (w: (typeof writers)[number]) => {
    const value = w.name === EVENTS ? batchOf(w.node) : valueOf(w.node);
    return fc.record({
      target: fc.constant(w.name),
      fingerprint: fc.constant(w.fingerprint),
      value,
      canonical: fc.boolean(),
      seed: fc.nat(),
    });
  };
  const events = writers.filter((w) => w.name === EVENTS).map(forWriter);
  // Each other record alike, then each of its versions: a record with more versions gets no larger share.
  const names = [...new Set(writers.filter((w) => w.name !== EVENTS).map((w) => w.name))];
  const others = names.map((name) => fc.oneof(...writers.filter((w) => w.name === name).map(forWriter)));
  const fetch = fc.record({ target: fc.constant(FETCH), fingerprint: fc.constant(0n), value: fetchSpecArbitrary(), canonical: fc.constant(true), seed: fc.nat() });
  return fc.oneof({ weight: 7, arbitrary: fc.oneof(...events) }, { weight: 3, arbitrary: fc.oneof(...others) }, { weight: 1, arbitrary: fetch });
}

function batchOf(node: Node): fc.Arbitrary<unknown> {
  const items = node.kind === 'record' && node.fields[0]?.type.kind === 'array' ? node.fields[0].type.items : node;
  const event = eventOf(items);
  return fc.oneof({ weight: 9, arbitrary: fc.array(event, { maxLength: 5 }) }, { weight: 1, arbitrary: fc.array(event, { minLength: 6, maxLength: 40 }) }).map((events) => ({ events }));
}

/** An input's bytes before mutation, with where its parts lie: an Avro record's varints and blocks, a fetch's batches. */
export interface Encoded {
  record: Buffer;
  spots: Spot[];
  /** Where each batch of a fetch starts, and each gzip batch uncompressed. */
  starts?: number[];
  plains?: (Buffer | undefined)[];
}

/** The input encoded: an Avro record (encodeSpec), or a fetch's batches by kafkajs's encoder. */
export async function encodeInput(sut: Sut, spec: InputSpec): Promise<Encoded> {
  if (spec.target !== FETCH) return encodeSpec(sut, spec);
  return { ...(await encodeFetch(spec.value as FetchSpec)), spots: [] };
}

/** The record encoded (header included), with where its varints and blocks lie in it. */
export function encodeSpec(sut: Sut, spec: InputSpec): Encoded {
  const { bytes: body, spots } = encodeTraced(sut.writers.get(spec.fingerprint)!.node, spec.value, new Rng(spec.seed), spec.canonical);
  const record = Buffer.alloc(10 + body.length);
  record[0] = 0xc3;
  record[1] = 0x01;
  record.writeBigUInt64LE(spec.fingerprint, 2);
  record.set(body, 10);
  for (const spot of spots) {
    spot.at += 10;
    spot.end += 10;
  }
  return { record, spots };
}

/** Variant `variant` of an encoded record: 0 as it is, else one to three mutations. */
export function variantOf(spec: InputSpec, encoded: Encoded, variant: number, fingerprints: readonly bigint[]): Input {
  if (variant === 0) return { target: spec.target, bytes: encoded.record, mutations: '-' };
  const rng = new Rng(mixSeed(spec.seed, variant));
  const count = rng.chance(0.75) ? 1 : 2 + rng.below(2);
  const { bytes, applied } = spec.target === FETCH ? mutateFetch(encoded.record, encoded.starts ?? [0], rng, count, encoded.plains) : mutate(encoded.record, encoded.spots, rng, count, fingerprints);
  return { target: spec.target, bytes, mutations: applied.join('+') || '-' };
}
