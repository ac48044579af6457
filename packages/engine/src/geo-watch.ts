import { GeoDetector, geoAlertId, hourOfWeek, HOURS_PER_WEEK, type DetectorOptions, type DetectorSnapshot, type GeoVerdict } from '@banstream/core';
import type { GeoAlert, GeoBaseline } from '@banstream/schemas';
import type { Outbox } from './outbox.js';

const COUNTRY = /^[A-Z]{2}$/;
const REGION = /^[A-Z]{2}-[A-Z0-9]{1,3}$/;

/** What a partition's watch needs from outside: per-code options and what was persisted. */
export interface GeoWatchDeps {
  optionsFor(code: string): DetectorOptions;
  /** The subject's persisted state, if the baselines topic has one. */
  restore(subject: string): DetectorSnapshot | undefined;
}

export interface Watched {
  readonly subject: string;
  readonly scope: string;
  readonly code: string;
  readonly detector: GeoDetector;
  /** Processing time of the last entry: a subject idle for long is judged at the wall clock. */
  lastEntryAt: number;
}

/** What one call changed, for metrics. */
export interface GeoWatchReport {
  verdicts: { scope: string; code: string; verdict: GeoVerdict }[];
  learned: number;
  restored: number;
}

/**
 * Geographic alerting for the countries and regions one subjects partition owns:
 * a detector per subject, created on its first entry from what the baselines topic
 * holds. Alerts go to the outbox with the subject's state in the same batch, so a
 * new owner never fires an alert again that was already published; the rest of the
 * state is written at most every flush interval.
 */
export class GeoWatch {
  private readonly watched = new Map<string, Watched>();

  constructor(private readonly deps: GeoWatchDeps) {}

  get size(): number {
    return this.watched.size;
  }

  values(): IterableIterator<Watched> {
    return this.watched.values();
  }

  /** Counts a geo entry (`country:FR`, `region:FR-IDF`) at its event time. */
  add(subject: string, timeMs: number, count: number, nowMs: number, out: Outbox, report: GeoWatchReport): void {
    const w = this.watch(subject, report);
    if (!w) return;
    w.lastEntryAt = nowMs;
    const result = { verdicts: [], learned: 0 };
    w.detector.add(timeMs, count, result);
    this.settle(w, result, nowMs, out, report);
  }

  /**
   * Judges, at the wall clock, subjects with an open alert that have had no entry for
   * `idleMs`: traffic that stops altogether must still resolve its alert.
   */
  idle(nowMs: number, idleMs: number, out: Outbox, report: GeoWatchReport): void {
    for (const w of this.watched.values()) {
      if (!w.detector.firing || nowMs - w.lastEntryAt < idleMs) continue;
      const result = { verdicts: [], learned: 0 };
      w.detector.advanceTo(nowMs, result);
      this.settle(w, result, nowMs, out, report);
    }
  }

  /** The state of every subject changed since it was last written (all of them with `all`). */
  flush(nowMs: number, out: Outbox, all = false): void {
    for (const w of this.watched.values()) if (all || w.detector.dirty) out.baselines.push(baselineRecord(w, nowMs));
  }

  private watch(subject: string, report: GeoWatchReport): Watched | undefined {
    let w = this.watched.get(subject);
    if (w) return w;
    const colon = subject.indexOf(':');
    const scope = subject.slice(0, colon);
    const code = subject.slice(colon + 1);
    // Edges send what they were told: only ISO 3166 shapes are watched (and become metric labels).
    if (!(scope === 'country' ? COUNTRY : REGION).test(code)) return undefined;
    const options = this.deps.optionsFor(code);
    const snapshot = this.deps.restore(subject);
    if (snapshot) report.restored++;
    const detector = snapshot ? GeoDetector.restore(options, snapshot) : new GeoDetector(options);
    w = { subject, scope, code, detector, lastEntryAt: 0 };
    this.watched.set(subject, w);
    return w;
  }

  private settle(w: Watched, result: { verdicts: GeoVerdict[]; learned: number }, nowMs: number, out: Outbox, report: GeoWatchReport): void {
    report.learned += result.learned;
    if (result.verdicts.length === 0) return;
    for (const v of result.verdicts) {
      out.alerts.push({ key: w.code, value: geoAlert(w, v) });
      report.verdicts.push({ scope: w.scope, code: w.code, verdict: v });
    }
    out.baselines.push(baselineRecord(w, nowMs));
  }
}

export function emptyReport(): GeoWatchReport {
  return { verdicts: [], learned: 0, restored: 0 };
}

function geoAlert(w: Watched, v: GeoVerdict): GeoAlert {
  return {
    alertId: geoAlertId(w.code, v.firedAt),
    scope: w.scope,
    code: w.code,
    state: v.state,
    currentRate: v.rate,
    baselineRate: v.baselineRate,
    zScore: v.zScore,
    ratio: v.ratio,
    hourOfWeek: hourOfWeek(v.at - 1, 'UTC'),
    at: v.at,
    timeZone: w.detector.timeZone,
    localHourOfWeek: v.hourOfWeek,
  };
}

/** The detector's snapshot as the baselines topic stores it; marks it written. */
function baselineRecord(w: Watched, nowMs: number) {
  const s = w.detector.snapshot();
  w.detector.dirty = false;
  const value: GeoBaseline = {
    subject: w.subject,
    timeZone: s.timeZone,
    evaluatedUntil: s.evaluatedUntil,
    ...s.baseline,
    alert: s.alert,
    cooldownUntil: Number.isFinite(s.cooldownUntil) ? s.cooldownUntil : -1,
    updatedAt: nowMs,
  };
  return { key: w.subject, value };
}

/** A stored record as a detector snapshot; a RangeError for arrays that are not one per hour of the week. */
export function snapshotOf(record: GeoBaseline): DetectorSnapshot {
  for (const a of [record.samples, record.means, record.variances]) {
    if (a.length !== HOURS_PER_WEEK) throw new RangeError(`${record.subject}: ${a.length} hours stored, expected ${HOURS_PER_WEEK}`);
  }
  return {
    timeZone: record.timeZone,
    evaluatedUntil: record.evaluatedUntil,
    baseline: { samples: record.samples, means: record.means, variances: record.variances },
    alert: record.alert,
    cooldownUntil: record.cooldownUntil < 0 ? -Infinity : record.cooldownUntil,
  };
}
