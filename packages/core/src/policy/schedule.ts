import { BanstreamError } from '../errors.js';
import type { ScheduleSpec } from './schema.js';

/**
 * Policy schedules in local wall-clock time of an IANA zone.
 *
 * A schedule is active when the local time is in [from, to) on one of `days`
 * (every day when omitted). When `to` is before `from` the window spans midnight
 * and belongs to the day it STARTED on: `fri 22:00-06:00` is active from Friday
 * 22:00 to Saturday 06:00, so Saturday 03:00 is active and Friday 03:00 is not.
 * `to: 24:00` is the end of the day. Because it is wall-clock time, a DST change
 * stretches or shrinks the real span: in Europe/Paris a 01:00-06:00 window lasts
 * 4 real hours on the spring-forward night and 6 on the fall-back night.
 *
 * isActive runs per request, so the zone's UTC offset is computed with
 * Intl.DateTimeFormat once per UTC hour and cached; a lookup is then arithmetic.
 */

export interface CompiledSchedule {
  /** Canonical IANA name (`utc` → `UTC`). */
  readonly timeZone: string;
  isActive(atMs: number): boolean;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const MINUTES_PER_DAY = 1440;
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
/** Hour buckets kept per zone before the cache starts over; a year is 8,760. */
const MAX_CACHED_HOURS = 20_000;

export function compileSchedule(spec: ScheduleSpec): CompiledSchedule {
  const zone = zoneOf(spec.timeZone);
  const from = minuteOfDay(spec.from, 'from');
  const to = minuteOfDay(spec.to, 'to');
  if (from === to) throw invalid(`schedule.from and schedule.to are both ${spec.from}: the window would be empty`);
  let mask = 0;
  for (const day of spec.days ?? DAYS) mask |= 1 << DAYS.indexOf(day);
  const on = (dow: number) => ((mask >> dow) & 1) === 1;
  const spansMidnight = to < from;

  return {
    timeZone: zone.name,
    isActive(atMs: number): boolean {
      const local = atMs + offsetAt(zone, atMs);
      const minute = mod(Math.floor(local / MINUTE), MINUTES_PER_DAY);
      const dow = dayOfWeek(local);
      if (!spansMidnight) return minute >= from && minute < to && on(dow);
      // After midnight the window still belongs to the previous day.
      return (minute >= from && on(dow)) || (minute < to && on((dow + 6) % 7));
    },
  };
}

/** Local hour of the week in `timeZone`, 0..167, Monday 00:00-00:59 = 0; the baseline bucket for geography. */
export function hourOfWeek(atMs: number, timeZone: string): number {
  const local = atMs + offsetAt(zoneOf(timeZone), atMs);
  return dayOfWeek(local) * 24 + Math.floor(mod(local, DAY) / HOUR);
}

// ---- zone offsets -------------------------------------------------------------

/** Offset during one UTC hour: constant, or switching once at `at` (a DST change). */
type Bucket = number | { before: number; after: number; at: number };

interface Zone {
  name: string;
  format: Intl.DateTimeFormat;
  buckets: Map<number, Bucket>;
  lastHour: number;
  lastBucket: Bucket;
}

/** One formatter per zone for the process: creating one costs tens of microseconds. */
const zones = new Map<string, Zone>();

function zoneOf(timeZone: string): Zone {
  let zone = zones.get(timeZone);
  if (zone === undefined) {
    let format: Intl.DateTimeFormat;
    try {
      format = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      throw invalid(`unknown time zone ${JSON.stringify(timeZone)}: expected an IANA name such as Europe/Paris`, err);
    }
    zone = { name: format.resolvedOptions().timeZone, format, buckets: new Map(), lastHour: Number.NaN, lastBucket: 0 };
    zones.set(timeZone, zone);
  }
  return zone;
}

/** Local time minus UTC, in ms, at `atMs`. */
function offsetAt(zone: Zone, atMs: number): number {
  const hour = Math.floor(atMs / HOUR);
  if (hour !== zone.lastHour) {
    let bucket = zone.buckets.get(hour);
    if (bucket === undefined) {
      if (zone.buckets.size >= MAX_CACHED_HOURS) zone.buckets.clear();
      bucket = computeBucket(zone, hour * HOUR);
      zone.buckets.set(hour, bucket);
    }
    zone.lastHour = hour;
    zone.lastBucket = bucket;
  }
  const b = zone.lastBucket;
  return typeof b === 'number' ? b : atMs < b.at ? b.before : b.after;
}

/** Offsets change at whole seconds and at most once an hour: compare both ends, bisect if they differ. */
function computeBucket(zone: Zone, start: number): Bucket {
  const before = exactOffset(zone, start);
  const after = exactOffset(zone, start + HOUR - 1);
  if (before === after) return before;
  let lo = start / 1000; // seconds with the old offset
  let hi = (start + HOUR) / 1000 - 1; // seconds with the new one
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (exactOffset(zone, mid * 1000) === before) lo = mid;
    else hi = mid;
  }
  return { before, after, at: hi * 1000 };
}

function exactOffset(zone: Zone, atMs: number): number {
  const p: Record<string, number> = {};
  for (const part of zone.format.formatToParts(atMs)) {
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  }
  const localAsUtc = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return localAsUtc - Math.floor(atMs / 1000) * 1000;
}

// ---- helpers ------------------------------------------------------------------

/** 0 = Monday for a local time in ms since the epoch (1970-01-01 was a Thursday). */
function dayOfWeek(localMs: number): number {
  return mod(Math.floor(localMs / DAY) + 3, 7);
}

function minuteOfDay(text: string, field: 'from' | 'to'): number {
  const m = /^([0-9]{2}):([0-9]{2})$/.exec(text);
  const minutes = m === null ? Number.NaN : Number(m[1]) * 60 + Number(m[2]);
  const max = field === 'to' ? MINUTES_PER_DAY : MINUTES_PER_DAY - 1;
  if (!(minutes <= max) || Number(m?.[2]) > 59) throw invalid(`schedule.${field} ${JSON.stringify(text)}: expected HH:MM from 00:00 to ${field === 'to' ? '24:00' : '23:59'}`);
  return minutes;
}

function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}

function invalid(message: string, cause?: unknown): BanstreamError {
  return new BanstreamError('POLICY_INVALID', message, cause === undefined ? {} : { cause });
}
