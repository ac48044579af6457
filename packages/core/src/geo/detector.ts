import { hourOfWeek } from '../policy/schedule.js';
import { HourlyBaseline, type BaselineArrays } from './baseline.js';
import type { GeoThresholds } from './settings.js';

export interface DetectorOptions {
  /** The rate is the count over this sliding window; one baseline sample is learned per window. */
  windowMs: number;
  /** A step is judged once the subject's event time is this far past it, so entries up to that late still count. */
  lagMs: number;
  /** The zone whose local hour of the week picks the baseline. */
  timeZone: string;
  thresholds: GeoThresholds;
  /** No alert from an hour of the week that has learned fewer samples. */
  warmupSamples: number;
  /** Weight of a new sample once an hour has 1/alpha of them. */
  alpha: number;
  /** How long (event time) the rate must stay back to normal before `resolved`. */
  resolveMs: number;
  /** After `resolved`, no new alert for this long (event time). */
  cooldownMs: number;
}

/** What one judged step looked like. */
export interface Judgement {
  /** Event time at the end of the window (ms). */
  at: number;
  /** Local hour of the week (0 = Monday 00:00) whose baseline was used. */
  hourOfWeek: number;
  /** Requests per second over the window. */
  rate: number;
  samples: number;
  baselineRate: number;
  /** What the deviation of the rate is taken to be: learned, Poisson, or a tenth of the mean, whichever is largest. */
  stdDev: number;
  /** Rate over the baseline (at least one request per window). */
  ratio: number;
  /** Deviation of the window's count on the square-root (variance-stabilised) scale, over the learned over-dispersion. */
  zScore: number;
}

export interface GeoVerdict extends Judgement {
  state: 'fired' | 'resolved';
  /** The step the episode fired at: with the code, its identity. */
  firedAt: number;
}

/** Where a detector reports: verdicts in order, and how many samples it learned. */
export interface DetectorOutput {
  verdicts: GeoVerdict[];
  learned: number;
}

export interface AlertEpisode {
  firedAt: number;
  /** First step of the current run of normal steps; null while abnormal. */
  normalSince: number | null;
}

/** Everything a detector must keep across a restart (the window itself is rebuilt by replay). */
export interface DetectorSnapshot {
  timeZone: string;
  /** Steps up to here were judged and learned; a replay does not judge them again. */
  evaluatedUntil: number;
  baseline: BaselineArrays;
  alert: AlertEpisode | null;
  cooldownUntil: number;
}

/** Resolving waits for the rate to fall half way back on every measure: no flapping at the threshold. */
const RESOLVE_SHARE = 0.5;
/** Deviations under a tenth of the mean are not news, however steady the hour was. */
const RELATIVE_STD_FLOOR = 0.1;
/** A subject silent for longer than this catches up on at most this much. */
const MAX_CATCH_UP_MS = 7 * 86_400_000;
const HOUR = 3_600_000;
const STEP_CHOICES = [6, 5, 4, 3, 2, 1] as const;

/** Where the local hour `hour` (that of `end`) began, between `start` and `end`: zones may sit on half and quarter hours. */
function hourStartBefore(end: number, start: number, hour: number, timeZone: string): number {
  let lo = start; // in an earlier hour
  let hi = end; // in `hour`
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (hourOfWeek(mid, timeZone) === hour) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Deterministic id of an episode: the resolved record reuses the fired one's. */
export function geoAlertId(code: string, firedAt: number): string {
  return `geo-${code}-${firedAt}`;
}

/**
 * Spike detection for one country or region, in its own event time. Entries
 * (time, count) fill a sliding window kept in a few steps; each step end is judged
 * once the subject's newest entry is `lagMs` past it: the windowed rate against the
 * baseline of that local hour of the week. An alert fires when ratio, z-score and
 * volume all reach their thresholds (never from an hour still warming up, nor
 * during the cooldown), and resolves once every measure has stayed half way back
 * for `resolveMs`. One sample per window (at whole multiples of it) is learned, but
 * never while an alert is open nor one that reaches the thresholds (during a
 * cooldown), so an attack does not teach the baseline that it is normal.
 * Windows that started before the detector's first entry (a new subject, or the
 * first after a restore) are incomplete: neither learned nor taken as normal.
 */
export class GeoDetector {
  readonly stepMs: number;
  private readonly steps: number;
  private readonly ring: Float64Array;
  private readonly ringStep: Float64Array;
  private evaluated: number | undefined;
  private newest = -Infinity;
  /** Windows starting before the first entry this detector saw are incomplete: what came before is unknown. */
  private completeFrom: number;
  private alert: AlertEpisode | null = null;
  private cooldownUntil = -Infinity;
  /** Changed since the last snapshot. */
  dirty = false;
  /** The last judged step, for gauges. */
  last: Judgement | undefined;

  constructor(
    private readonly options: DetectorOptions,
    private baseline = new HourlyBaseline(options.alpha),
  ) {
    const { windowMs, lagMs } = options;
    this.steps = STEP_CHOICES.find((n) => windowMs % n === 0) ?? 1;
    this.stepMs = windowMs / this.steps;
    const slots = this.steps + Math.ceil(lagMs / this.stepMs) + 3;
    this.ring = new Float64Array(slots);
    this.ringStep = new Float64Array(slots).fill(-1);
    this.completeFrom = Infinity;
  }

  static restore(options: DetectorOptions, snapshot: DetectorSnapshot): GeoDetector {
    // Hours learned in another zone are other hours: start over rather than mislead.
    const baseline = snapshot.timeZone === options.timeZone ? HourlyBaseline.fromArrays(options.alpha, snapshot.baseline) : undefined;
    const d = new GeoDetector(options, baseline);
    d.evaluated = snapshot.evaluatedUntil;
    d.alert = snapshot.alert === null ? null : { ...snapshot.alert };
    d.cooldownUntil = snapshot.cooldownUntil;
    return d;
  }

  snapshot(): DetectorSnapshot {
    return {
      timeZone: this.options.timeZone,
      evaluatedUntil: this.evaluated ?? 0,
      baseline: this.baseline.toArrays(),
      alert: this.alert === null ? null : { ...this.alert },
      cooldownUntil: this.cooldownUntil,
    };
  }

  get timeZone(): string {
    return this.options.timeZone;
  }

  get firing(): boolean {
    return this.alert !== null;
  }

  /** Newest entry time seen. */
  get eventTime(): number {
    return this.newest;
  }

  get evaluatedUntil(): number | undefined {
    return this.evaluated;
  }

  get learnedHours(): number {
    return this.baseline.learnedHours;
  }

  /** Counts `count` requests at `timeMs`; returns false when it is too late to count. */
  add(timeMs: number, count: number, out: DetectorOutput): boolean {
    const k = Math.ceil(timeMs / this.stepMs);
    this.completeFrom = Math.min(this.completeFrom, (k - 1) * this.stepMs);
    // The first entry ever: the first step to judge is the one it falls in.
    this.evaluated ??= (k - 1) * this.stepMs;
    this.advanceTo(timeMs, out);
    if (timeMs > this.newest) this.newest = timeMs;
    // Steps before this one can no longer change any window still to be judged.
    if (k < this.evaluated / this.stepMs + 2 - this.steps) return false;
    const slot = k % this.ring.length;
    const before = this.ringStep[slot] === k ? this.ring[slot]! : 0;
    this.ringStep[slot] = k;
    this.ring[slot] = before + count;
    return true;
  }

  /** Judges every step that ends more than `lagMs` before `timeMs` (the event time reached). */
  advanceTo(timeMs: number, out: DetectorOutput): void {
    if (this.evaluated === undefined) return;
    const until = timeMs - this.options.lagMs;
    if (until - this.evaluated > MAX_CATCH_UP_MS) this.evaluated = Math.floor((until - MAX_CATCH_UP_MS) / this.stepMs) * this.stepMs;
    for (let at = this.evaluated + this.stepMs; at < until; at += this.stepMs) {
      this.judgeStep(at, out);
      this.evaluated = at;
    }
  }

  /**
   * The rate over the window ending at `at` against the baseline of its hour; a
   * window that straddles two local hours is judged against both, weighted by its
   * time in each, so a sharp change at an hour boundary is not news.
   */
  judge(at: number): Judgement {
    const { windowMs, timeZone } = this.options;
    const seconds = windowMs / 1000;
    let count = 0;
    const k = at / this.stepMs;
    for (let i = k - this.steps + 1; i <= k; i++) {
      const slot = i % this.ring.length;
      if (this.ringStep[slot] === i) count += this.ring[slot]!;
    }
    const rate = count / seconds;
    const hour = hourOfWeek(at - 1, timeZone);
    let { samples, mean, variance } = this.baseline.stats(hour);
    const startHour = windowMs <= HOUR ? hourOfWeek(at - windowMs, timeZone) : hour;
    if (startHour !== hour) {
      const before = this.baseline.stats(startHour);
      const share = (hourStartBefore(at - 1, at - windowMs, hour, timeZone) - (at - windowMs)) / windowMs;
      samples = Math.min(samples, before.samples);
      mean = share * before.mean + (1 - share) * mean;
      variance = share * before.variance + (1 - share) * variance;
    }
    // The z-score is taken on the square-root scale of the window's count, where a
    // Poisson count's noise is the same at every rate (Anscombe): at a few requests a
    // window, ten where two are usual is luck, not an attack. It is divided by the
    // learned over-dispersion, and deviations under a tenth of the mean never count.
    const expected = mean * seconds;
    const least = Math.max(expected, 1); // one request per window: keeps ratio and z finite
    const dispersion = Math.max(1, (variance * seconds * seconds) / least, RELATIVE_STD_FLOOR ** 2 * least);
    const zScore = (2 * (Math.sqrt(count + 3 / 8) - Math.sqrt(expected + 3 / 8))) / Math.sqrt(dispersion);
    const stdDev = Math.sqrt(dispersion * least) / seconds;
    return { at, hourOfWeek: hour, rate, samples, baselineRate: mean, stdDev, ratio: count / least, zScore };
  }

  private judgeStep(at: number, out: DetectorOutput): void {
    const { options } = this;
    const j = this.judge(at);
    this.last = j;
    const complete = at - options.windowMs >= this.completeFrom;
    const warm = j.samples >= options.warmupSamples;
    if (this.alert === null) {
      const abnormal = warm && exceeds(j, options.thresholds, 1);
      if (complete && abnormal && at >= this.cooldownUntil) {
        this.alert = { firedAt: at, normalSince: null };
        this.dirty = true;
        out.verdicts.push({ ...j, state: 'fired', firedAt: at });
      } else if (complete && !abnormal && at % options.windowMs === 0) {
        this.baseline.learn(j.hourOfWeek, j.rate);
        this.dirty = true;
        out.learned++;
      }
      return;
    }
    if (!complete) return;
    // An hour still warming up cannot say the rate is abnormal.
    if (warm && exceeds(j, options.thresholds, RESOLVE_SHARE)) {
      if (this.alert.normalSince !== null) this.dirty = true;
      this.alert.normalSince = null;
      return;
    }
    if (this.alert.normalSince === null) {
      this.alert.normalSince = at;
      this.dirty = true;
    }
    if (at - this.alert.normalSince < options.resolveMs) return;
    out.verdicts.push({ ...j, state: 'resolved', firedAt: this.alert.firedAt });
    this.alert = null;
    this.cooldownUntil = at + options.cooldownMs;
    this.dirty = true;
  }
}

/** All three measures at or above `share` of the way to their thresholds (1: the thresholds themselves). */
function exceeds(j: Judgement, t: GeoThresholds, share: number): boolean {
  return j.ratio >= 1 + (t.ratio - 1) * share && j.zScore >= t.z * share && j.rate >= t.minRate * share;
}
