import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '../errors.js';
import { compileSchedule, hourOfWeek } from './schedule.js';
import type { ScheduleSpec } from './schema.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);

/** Real minutes during which the schedule is active between two instants. */
function activeMinutes(spec: ScheduleSpec, fromIso: string, toIso: string): number {
  const s = compileSchedule(spec);
  let n = 0;
  for (let t = at(fromIso); t < at(toIso); t += MINUTE) if (s.isActive(t)) n++;
  return n;
}

describe('compileSchedule', () => {
  it('is active in [from, to) on the listed days', () => {
    const s = compileSchedule({ timeZone: 'UTC', days: ['mon', 'tue'], from: '09:00', to: '17:30' });
    expect(s.isActive(at('2026-06-01T08:59:59Z'))).toBe(false); // Monday
    expect(s.isActive(at('2026-06-01T09:00:00Z'))).toBe(true);
    expect(s.isActive(at('2026-06-01T17:29:59Z'))).toBe(true);
    expect(s.isActive(at('2026-06-01T17:30:00Z'))).toBe(false);
    expect(s.isActive(at('2026-06-03T12:00:00Z'))).toBe(false); // Wednesday
  });

  it('counts a window across midnight on the day it started', () => {
    const s = compileSchedule({ timeZone: 'UTC', days: ['fri'], from: '22:00', to: '06:00' });
    expect(s.isActive(at('2026-06-05T23:00:00Z'))).toBe(true); // Friday night
    expect(s.isActive(at('2026-06-06T03:00:00Z'))).toBe(true); // Saturday 03:00: Friday's window
    expect(s.isActive(at('2026-06-06T06:00:00Z'))).toBe(false);
    expect(s.isActive(at('2026-06-05T03:00:00Z'))).toBe(false); // Friday 03:00 belongs to Thursday
    expect(s.isActive(at('2026-06-06T22:30:00Z'))).toBe(false); // Saturday night is not listed
  });

  it('treats 24:00 as the end of the day, and 00:00 as midnight', () => {
    const toEnd = compileSchedule({ timeZone: 'UTC', days: ['sun'], from: '18:00', to: '24:00' });
    expect(toEnd.isActive(at('2026-06-07T23:59:59Z'))).toBe(true);
    expect(toEnd.isActive(at('2026-06-08T00:00:00Z'))).toBe(false);
    const toMidnight = compileSchedule({ timeZone: 'UTC', from: '22:00', to: '00:00' });
    expect(toMidnight.isActive(at('2026-06-07T23:59:00Z'))).toBe(true);
    expect(toMidnight.isActive(at('2026-06-08T00:00:00Z'))).toBe(false);
    expect(compileSchedule({ timeZone: 'UTC', from: '00:00', to: '24:00' }).isActive(at('2026-06-07T12:00:00Z'))).toBe(true);
  });

  it('refuses an unknown zone and an empty window with POLICY_INVALID', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return isBanstreamError(err) ? err.code : err;
      }
    };
    expect(code(() => compileSchedule({ timeZone: 'Mars/Olympus', from: '01:00', to: '02:00' }))).toBe('POLICY_INVALID');
    expect(code(() => compileSchedule({ timeZone: 'UTC', from: '01:00', to: '01:00' }))).toBe('POLICY_INVALID');
    expect(code(() => compileSchedule({ timeZone: 'UTC', from: '01:00', to: '24:30' }))).toBe('POLICY_INVALID');
  });

  it('reports the canonical zone name', () => {
    expect(compileSchedule({ timeZone: 'europe/paris', from: '01:00', to: '02:00' }).timeZone).toBe('Europe/Paris');
  });
});

describe('compileSchedule across DST (wall-clock time)', () => {
  const night = (timeZone: string): ScheduleSpec => ({ timeZone, from: '01:00', to: '06:00' });

  it('Europe/Paris spring forward (2026-03-29 02:00→03:00): 4 real hours', () => {
    expect(activeMinutes(night('Europe/Paris'), '2026-03-28T18:00:00Z', '2026-03-29T12:00:00Z')).toBe(4 * 60);
    const s = compileSchedule(night('Europe/Paris'));
    expect(s.isActive(at('2026-03-29T00:00:00Z'))).toBe(true); // 01:00 CET
    expect(s.isActive(at('2026-03-29T03:59:00Z'))).toBe(true); // 05:59 CEST
    expect(s.isActive(at('2026-03-29T04:00:00Z'))).toBe(false); // 06:00 CEST
  });

  it('Europe/Paris fall back (2026-10-25 03:00→02:00): 6 real hours', () => {
    expect(activeMinutes(night('Europe/Paris'), '2026-10-24T18:00:00Z', '2026-10-25T12:00:00Z')).toBe(6 * 60);
    const s = compileSchedule(night('Europe/Paris'));
    expect(s.isActive(at('2026-10-24T22:59:00Z'))).toBe(false); // 00:59 CEST
    expect(s.isActive(at('2026-10-24T23:00:00Z'))).toBe(true); // 01:00 CEST
    expect(s.isActive(at('2026-10-25T04:59:00Z'))).toBe(true); // 05:59 CET
    expect(s.isActive(at('2026-10-25T05:00:00Z'))).toBe(false); // 06:00 CET
  });

  it('America/New_York: 4 real hours on 2026-03-08, 6 on 2026-11-01, business hours in summer', () => {
    expect(activeMinutes(night('America/New_York'), '2026-03-08T00:00:00Z', '2026-03-08T18:00:00Z')).toBe(4 * 60);
    expect(activeMinutes(night('America/New_York'), '2026-11-01T00:00:00Z', '2026-11-01T18:00:00Z')).toBe(6 * 60);
    const office = compileSchedule({ timeZone: 'America/New_York', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' });
    expect(office.isActive(at('2026-07-06T12:59:00Z'))).toBe(false);
    expect(office.isActive(at('2026-07-06T13:00:00Z'))).toBe(true); // 09:00 EDT, Monday
    expect(office.isActive(at('2026-07-04T15:00:00Z'))).toBe(false); // Saturday
  });

  it('Asia/Kolkata: a 30-minute offset', () => {
    const s = compileSchedule({ timeZone: 'Asia/Kolkata', from: '09:00', to: '17:00' });
    expect(s.isActive(at('2026-01-15T03:29:00Z'))).toBe(false);
    expect(s.isActive(at('2026-01-15T03:30:00Z'))).toBe(true);
    expect(s.isActive(at('2026-01-15T11:29:00Z'))).toBe(true);
    expect(s.isActive(at('2026-01-15T11:30:00Z'))).toBe(false);
  });

  it('Australia/Sydney: southern summer time ends in April and starts in October', () => {
    expect(activeMinutes(night('Australia/Sydney'), '2026-04-04T08:00:00Z', '2026-04-05T08:00:00Z')).toBe(6 * 60);
    expect(activeMinutes(night('Australia/Sydney'), '2026-10-03T08:00:00Z', '2026-10-04T08:00:00Z')).toBe(4 * 60);
    const s = compileSchedule({ timeZone: 'Australia/Sydney', days: ['mon'], from: '09:00', to: '10:00' });
    expect(s.isActive(at('2026-01-04T22:00:00Z'))).toBe(true); // Monday 09:00 AEDT (+11)
    expect(s.isActive(at('2026-07-05T23:00:00Z'))).toBe(true); // Monday 09:00 AEST (+10)
    expect(s.isActive(at('2026-07-05T22:00:00Z'))).toBe(false); // Monday 08:00 AEST
  });
});

describe('compileSchedule: DST changes that are not on a whole UTC hour', () => {
  it('Australia/Lord_Howe moves its clock by 30 minutes at 15:00 and 15:30 UTC', () => {
    const night = { timeZone: 'Australia/Lord_Howe', from: '01:00', to: '06:00' };
    expect(activeMinutes(night, '2026-04-04T08:00:00Z', '2026-04-05T08:00:00Z')).toBe(5 * 60 + 30);
    expect(activeMinutes(night, '2026-10-03T08:00:00Z', '2026-10-04T08:00:00Z')).toBe(4 * 60 + 30);
  });

  it('America/St_Johns (-03:30) springs forward at 05:30 UTC', () => {
    const s = compileSchedule({ timeZone: 'America/St_Johns', from: '03:00', to: '04:00' });
    expect(s.isActive(at('2026-03-08T05:29:00Z'))).toBe(false); // 01:59 NST
    expect(s.isActive(at('2026-03-08T05:30:00Z'))).toBe(true); // 03:00 NDT
    expect(s.isActive(at('2026-03-08T06:29:00Z'))).toBe(true);
    expect(s.isActive(at('2026-03-08T06:30:00Z'))).toBe(false);
  });
});

describe('hourOfWeek', () => {
  it('counts from Monday 00:00 local', () => {
    expect(hourOfWeek(at('2026-06-01T00:00:00Z'), 'UTC')).toBe(0); // Monday
    expect(hourOfWeek(at('2026-06-07T23:59:59Z'), 'UTC')).toBe(167); // Sunday
    expect(hourOfWeek(at('2026-06-01T00:00:00Z'), 'Europe/Paris')).toBe(2); // Monday 02:00 CEST
    expect(hourOfWeek(at('2026-05-31T22:00:00Z'), 'Europe/Paris')).toBe(0);
    expect(hourOfWeek(at('2026-05-31T21:59:00Z'), 'Europe/Paris')).toBe(167);
    expect(hourOfWeek(at('2026-06-01T00:00:00Z'), 'Asia/Kolkata')).toBe(5); // 05:30
    expect(hourOfWeek(at('2026-06-01T00:00:00Z'), 'America/New_York')).toBe(6 * 24 + 20); // Sunday 20:00 EDT
  });

  it('follows the local clock across DST', () => {
    expect(hourOfWeek(at('2026-03-29T00:59:00Z'), 'Europe/Paris')).toBe(6 * 24 + 1); // Sunday 01:59 CET
    expect(hourOfWeek(at('2026-03-29T01:00:00Z'), 'Europe/Paris')).toBe(6 * 24 + 3); // Sunday 03:00 CEST
    expect(hourOfWeek(at('2026-10-25T00:30:00Z'), 'Europe/Paris')).toBe(6 * 24 + 2); // 02:30 CEST
    expect(hourOfWeek(at('2026-10-25T01:30:00Z'), 'Europe/Paris')).toBe(6 * 24 + 2); // 02:30 CET, again
  });
});

// ---- property tests against an independent reading of the local clock ---------------

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns'];
const oracleFormats = new Map<string, Intl.DateTimeFormat>();

/** Local weekday and minute straight from Intl, with no offset arithmetic. */
function localClock(atMs: number, timeZone: string): { day: number; minute: number } {
  let f = oracleFormats.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: 'numeric', minute: 'numeric', hourCycle: 'h23' });
    oracleFormats.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(atMs).map((p) => [p.type, p.value]));
  return { day: DAYS.indexOf(String(parts.weekday).toLowerCase() as (typeof DAYS)[number]), minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

function bruteForce(spec: ScheduleSpec, atMs: number): boolean {
  const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));
  const [from, to] = [minutes(spec.from), minutes(spec.to)];
  const { day, minute } = localClock(atMs, spec.timeZone);
  const listed = (d: number) => (spec.days ?? DAYS).includes(DAYS[d]!);
  if (from < to) return listed(day) && from <= minute && minute < to;
  return (listed(day) && minute >= from) || (listed((day + 6) % 7) && minute < to);
}

const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
const scheduleArb = fc
  .record({
    timeZone: fc.constantFrom(...ZONES),
    from: fc.integer({ min: 0, max: 1439 }),
    to: fc.integer({ min: 0, max: 1440 }),
    days: fc.option(fc.subarray([...DAYS], { minLength: 1 }), { nil: undefined }),
  })
  .filter((s) => s.from !== s.to)
  .map(({ from, to, days, timeZone }): ScheduleSpec => ({ timeZone, from: hhmm(from), to: hhmm(to), ...(days === undefined ? {} : { days }) }));

/** Random instants, half of them within two hours of a DST change. */
const TRANSITIONS = [
  '2026-03-29T01:00:00Z', // Paris
  '2026-10-25T01:00:00Z',
  '2026-03-08T07:00:00Z', // New York
  '2026-11-01T06:00:00Z',
  '2026-04-04T16:00:00Z', // Sydney
  '2026-10-03T16:00:00Z',
  '2026-04-04T15:00:00Z', // Lord Howe: half-hour shifts, off the UTC hour
  '2026-10-03T15:30:00Z',
  '2026-03-08T05:30:00Z', // St John's
  '2026-04-04T14:00:00Z', // Chatham
].map(at);
const instantArb = fc.oneof(
  fc.integer({ min: at('2000-01-01T00:00:00Z'), max: at('2040-01-01T00:00:00Z') }),
  fc.tuple(fc.constantFrom(...TRANSITIONS), fc.integer({ min: -2 * HOUR, max: 2 * HOUR })).map(([t, d]) => t + d),
);

describe('property: isActive and hourOfWeek agree with a direct reading of the local clock', () => {
  it('isActive at random instants', () => {
    fc.assert(
      fc.property(scheduleArb, fc.array(instantArb, { minLength: 1, maxLength: 20 }), (spec, instants) => {
        const s = compileSchedule(spec);
        for (const t of instants) expect(s.isActive(t)).toBe(bruteForce(spec, t));
      }),
      { numRuns: 300 },
    );
  });

  it('hourOfWeek at random instants', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), instantArb, (zone, t) => {
        const { day, minute } = localClock(t, zone);
        expect(hourOfWeek(t, zone)).toBe(day * 24 + Math.floor(minute / 60));
      }),
      { numRuns: 1000 },
    );
  });
});
