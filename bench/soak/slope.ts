/**
 * Memory slope of a soak run: a least-squares line through (time, value) samples
 * taken after the warm-up, so start-up allocation and JIT do not count as growth.
 */

export interface Sample {
  /** ms since the start of the run. */
  t: number;
  value: number;
}

/** Least-squares slope of value over t (value units per ms); NaN with fewer than two distinct times. */
export function leastSquaresSlope(samples: readonly Sample[]): number {
  const n = samples.length;
  if (n < 2) return Number.NaN;
  let mt = 0;
  let mv = 0;
  for (const s of samples) {
    mt += s.t / n;
    mv += s.value / n;
  }
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.t - mt) * (s.value - mv);
    den += (s.t - mt) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** The default warm-up: two minutes, or a fifth of the run when that is shorter. */
export function defaultWarmupMs(runMs: number): number {
  return Math.min(120_000, runMs / 5);
}

/** Slope in MB per minute of byte samples taken at or after `warmupMs`. */
export function mbPerMinAfter(samples: readonly Sample[], warmupMs: number): number {
  const kept = samples.filter((s) => s.t >= warmupMs);
  return (leastSquaresSlope(kept) * 60_000) / (1024 * 1024);
}
