/** What the harness counts per reader (or boundary), and the first failure it saw. */

export const FAILURE_KINDS = ['crashes', 'slow', 'disagreements', 'lost'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export interface Counts {
  tried: number;
  /** Inputs the reader accepted (for a fast path: took, not left to the slow path). */
  accepted: number;
  crashes: number;
  /** Decodes over the time limit, three times in a row. */
  slow: number;
  disagreements: number;
  /** Events the gateway accepted that the aggregator did not read back as they were. */
  lost: number;
}

export interface Failure {
  reader: string;
  kind: FailureKind;
  detail: string;
  /** The input, hex, header included. */
  hex: string;
  /** Replays the input: `npm run fuzz -- --seed <seed> --replay <path>`. */
  path: string;
  target: string;
  mutations: string;
}

export type Tally = Record<string, Counts>;

/** Rows that count inputs, not a reader: the mutated events records and other records tried. */
export const MUTATED_EVENTS = '(mutated events records)';
export const MUTATED_OTHERS = '(mutated other records)';
export const MUTATED_FETCHES = '(mutated kafka fetches)';
/** The Kafka-level readers of a fetch (fetch.ts): banstream's patch, and kafkajs's own as its reference. */
export const PATCH_READER = 'kafka.decodeMessages (patch)';
export const KAFKAJS_READER = 'kafkajs.decodeMessages';

/** Inputs tried in a tally: each goes once to the reference (Avro) or to the patch's reader (a fetch). */
export function inputsIn(tally: Tally): number {
  return (tally.reference?.tried ?? 0) + (tally[PATCH_READER]?.tried ?? 0);
}
/** Events records the reference accepted, by what they say of costs: every reader was compared on them. */
export const COSTLY_EVENTS = '(events records with a cost other than 1)';
export const COSTLESS_EVENTS = '(events records of a writer without cost)';

export function emptyCounts(): Counts {
  return { tried: 0, accepted: 0, crashes: 0, slow: 0, disagreements: 0, lost: 0 };
}

export function countsOf(tally: Tally, reader: string): Counts {
  return (tally[reader] ??= emptyCounts());
}

export function mergeTally(into: Tally, from: Tally): void {
  for (const [reader, c] of Object.entries(from)) {
    const t = countsOf(into, reader);
    for (const k of Object.keys(c) as (keyof Counts)[]) t[k] += c[k];
  }
}

export function failuresIn(tally: Tally): number {
  let n = 0;
  for (const c of Object.values(tally)) for (const k of FAILURE_KINDS) n += c[k];
  return n;
}
