/** Hours in a week: the buckets of a baseline, 0 = Monday 00:00-00:59 local time. */
export const HOURS_PER_WEEK = 168;

/** The learned rate of one hour of the week. */
export interface HourStats {
  /** Samples learned into this hour (the warm-up rule reads it). */
  samples: number;
  /** Mean rate, requests per second. */
  mean: number;
  variance: number;
}

/** The plain-data form of a baseline, for persistence. */
export interface BaselineArrays {
  samples: number[];
  means: number[];
  variances: number[];
}

/**
 * A request-rate baseline per hour of the week: an exponentially weighted mean and
 * variance for each of the 168 hours. Until an hour has seen 1/alpha samples it
 * keeps the plain running mean and variance (weight 1/n), so the first week is not
 * biased towards its first sample; after that, weight `alpha` forgets old weeks
 * gradually (about 1/alpha samples of memory).
 */
export class HourlyBaseline {
  private readonly samples = new Float64Array(HOURS_PER_WEEK);
  private readonly means = new Float64Array(HOURS_PER_WEEK);
  private readonly variances = new Float64Array(HOURS_PER_WEEK);

  constructor(readonly alpha: number) {
    if (!(alpha > 0 && alpha <= 1)) throw new RangeError(`alpha must be in (0, 1], got ${alpha}`);
  }

  /** Learns one rate sample (requests per second) into `hour`. */
  learn(hour: number, rate: number): void {
    const n = ++this.samples[hour]!;
    const weight = Math.max(this.alpha, 1 / n);
    const diff = rate - this.means[hour]!;
    const step = weight * diff;
    this.means[hour]! += step;
    // West's incremental update: with weight 1/n it is exactly the population variance.
    this.variances[hour] = (1 - weight) * (this.variances[hour]! + diff * step);
  }

  stats(hour: number): HourStats {
    return { samples: this.samples[hour]!, mean: this.means[hour]!, variance: this.variances[hour]! };
  }

  /** Hours that have learned anything. */
  get learnedHours(): number {
    let n = 0;
    for (const s of this.samples) if (s > 0) n++;
    return n;
  }

  toArrays(): BaselineArrays {
    return { samples: [...this.samples], means: [...this.means], variances: [...this.variances] };
  }

  /** A baseline from its arrays; arrays of another length (a corrupt record) are refused. */
  static fromArrays(alpha: number, arrays: BaselineArrays): HourlyBaseline {
    const b = new HourlyBaseline(alpha);
    for (const a of [arrays.samples, arrays.means, arrays.variances]) {
      if (a.length !== HOURS_PER_WEEK) throw new RangeError(`a baseline has ${HOURS_PER_WEEK} hours, got ${a.length}`);
    }
    b.samples.set(arrays.samples);
    b.means.set(arrays.means);
    b.variances.set(arrays.variances);
    return b;
  }
}
