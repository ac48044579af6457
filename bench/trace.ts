/**
 * A seeded synthetic request trace for bench/accuracy: who sends when. Deterministic for
 * a seed; every source belongs to one class so results can be broken down by behaviour.
 * Times are whole ms from 0; a source's requests are generated independently and the
 * whole trace is then sorted by time (ties by source).
 */
import { prng } from './lib.js';

export const CLASSES = [
  'steady', // Poisson clients under the limit
  'poller', // periodic clients, some pacing themselves near the limit
  'bursty', // occasional bursts, some just under the limit
  'attacker_minute_edge', // classic fixed-window double burst around a minute boundary
  'attacker_bucket_edge', // the same double burst around one of the engine's bucket edges
  'attacker_window_edge', // a burst at a bucket's end, the next just before it leaves the window
  'attacker_span_decoy', // one early request, then the burst at the bucket's end: defeats span interpolation
  'compliant_exact_edge', // bursts exactly one window apart: never over the limit in any exact window
  'attacker_flood', // floods (5–20× the limit) and clients slightly over it
] as const;
export type SourceClass = (typeof CLASSES)[number];

export interface TraceParams {
  seed: number;
  durationMs: number;
  limit: number;
  windowMs: number;
  /** The engine's bucket length, which the edge attackers aim at. */
  granularityMs: number;
  counts: Record<SourceClass, number>;
}

export interface Trace {
  /** Request times, ascending. */
  times: Float64Array;
  /** Source of each request. */
  sources: Uint32Array;
  /** Class index (into CLASSES) of each source. */
  classOf: Uint8Array;
}

export function generateTrace(p: TraceParams): Trace {
  const random = prng(p.seed);
  const uniform = (a: number, b: number) => a + (b - a) * random();
  const logUniform = (a: number, b: number) => Math.exp(uniform(Math.log(a), Math.log(b)));
  const exponential = (mean: number) => -Math.log(1 - random()) * mean;
  const { limit: L, windowMs: W, granularityMs: G, durationMs: T } = p;
  const perSource: number[][] = [];
  const classOf: number[] = [];
  const session = (minMs: number, maxMs: number) => {
    const length = uniform(minMs, maxMs);
    const start = uniform(-length / 2, T);
    return [start, start + length] as const;
  };
  const burst = (out: number[], at: number, size: number, spreadMs: number) => {
    for (let k = 0; k < size; k++) out.push(at + random() * spreadMs);
  };
  const makers: Record<SourceClass, () => number[]> = {
    steady: () => {
      const perMs = logUniform(0.2, 60) / 60_000;
      const [from, to] = session(60_000, 15 * 60_000);
      const out: number[] = [];
      for (let t = from + exponential(1 / perMs); t < to; t += exponential(1 / perMs)) out.push(t);
      return out;
    },
    poller: () => {
      const period = logUniform(750, 30_000);
      const [from, to] = session(5 * 60_000, 30 * 60_000);
      const out: number[] = [];
      for (let t = from + random() * period; t < to; t += period * uniform(0.95, 1.05)) out.push(t);
      return out;
    },
    bursty: () => {
      const [from, to] = session(10 * 60_000, 40 * 60_000);
      const out: number[] = [];
      for (let t = from + exponential(5 * 60_000); t < to; t += exponential(5 * 60_000)) {
        const size = random() < 0.3 ? Math.floor(uniform(80, L)) : Math.floor(uniform(3, 50));
        burst(out, t, size, uniform(20, 3_000));
      }
      return out;
    },
    attacker_minute_edge: () => edgeBursts(60_000, 300),
    attacker_bucket_edge: () => edgeBursts(G, 50),
    attacker_window_edge: () =>
      cycles((out, t0) => {
        const end = Math.ceil(t0 / G) * G; // a bucket edge
        const n = L - 1 - Math.floor(random() * 3);
        burst(out, end - 20, n, 19);
        const early = [1, 5, 50, 500, G / 4][Math.floor(random() * 5)]!;
        burst(out, end - 20 + W - early, n, 1);
        return end;
      }),
    attacker_span_decoy: () =>
      cycles((out, t0) => {
        const end = Math.ceil(t0 / G) * G;
        out.push(end - G); // the decoy stretches the bucket's span to all of G
        const n = L - 2;
        burst(out, end - 11, n, 10);
        const early = [1, 5, 50, 500][Math.floor(random() * 4)]!;
        burst(out, end - 11 + W - early, L, 5);
        return end;
      }),
    compliant_exact_edge: () =>
      cycles((out, t0) => {
        const n = L - 1 - Math.floor(random() * 3);
        const first = out.length;
        burst(out, t0, n, 100);
        const last = Math.max(...out.slice(first).map(Math.floor));
        burst(out, last + W + 1, n, uniform(1, 200));
        return t0;
      }),
    attacker_flood: () => {
      const out: number[] = [];
      let t = random() * T;
      while (t < T) {
        const perMs = ((random() < 0.5 ? uniform(1.05, 1.4) : uniform(5, 20)) * L) / W;
        const length = uniform(60_000, 300_000);
        for (let u = t; u < t + length; u += exponential(1 / perMs)) out.push(u);
        t += length + uniform(2, 12) * 60_000;
      }
      return out;
    },
  };
  function cycles(one: (out: number[], t0: number) => number): number[] {
    const out: number[] = [];
    let t0 = random() * (T / 2);
    for (let c = 2 + Math.floor(random() * 8); c > 0 && t0 < T; c--) t0 = one(out, t0) + uniform(2, 6) * 60_000;
    return out;
  }
  function edgeBursts(edgeEvery: number, spreadMs: number): number[] {
    return cycles((out, t0) => {
      const edge = Math.ceil(t0 / edgeEvery) * edgeEvery;
      const n = L - 1 - Math.floor(random() * 3);
      burst(out, edge - spreadMs, n, spreadMs - 1);
      burst(out, edge, n, spreadMs);
      return edge;
    });
  }
  CLASSES.forEach((cls, index) => {
    for (let s = 0; s < p.counts[cls]; s++) {
      perSource.push(makers[cls]());
      classOf.push(index);
    }
  });
  return merge(perSource, Uint8Array.from(classOf), T);
}

/** One time-ordered stream; each request packed as time × 2^17 + source so a numeric sort orders both. */
function merge(perSource: number[][], classOf: Uint8Array, durationMs: number): Trace {
  if (perSource.length > 1 << 17) throw new Error('too many sources to pack');
  let n = 0;
  for (const times of perSource) for (const t of times) if (t >= 0 && t < durationMs) n++;
  const packed = new Float64Array(n);
  let i = 0;
  perSource.forEach((times, source) => {
    for (const t of times) if (t >= 0 && t < durationMs) packed[i++] = Math.floor(t) * 131_072 + source;
  });
  packed.sort();
  const times = new Float64Array(n);
  const sources = new Uint32Array(n);
  for (let k = 0; k < n; k++) {
    const v = packed[k]!;
    sources[k] = v % 131_072;
    times[k] = (v - sources[k]!) / 131_072;
  }
  return { times, sources, classOf };
}
