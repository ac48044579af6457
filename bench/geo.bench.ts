/**
 * npm run bench -- geo
 *
 * Geographic spike detection, driven directly (no Kafka): the pure GeoDetector the
 * aggregator runs per country, fed one entry per second of event time as stage one
 * sends them, on seeded synthetic traffic. Twelve countries in their own time zones,
 * from 2 to 200 requests/s at their daily peak, diurnal (quiet at 03:00, busy at
 * 14:00 local time), quieter at weekends, each day 10% busier or quieter at random,
 * Poisson noise per second; from 2026-03-09, so the weeks cross the European and
 * Australian daylight-saving changes. Default thresholds (ratio 3, z 5, 1 request/s),
 * one-minute window, 5 s lag, warm-up 30 samples.
 *
 * - false_alerts_per_country_week: alerts fired on clean traffic during the MEASURED
 *   weeks that follow one week of learning.
 * - detection_delay_s: from a spike's first second to the moment the detector can
 *   publish the alert (the step it fired at plus the lag), in event time. Each trial
 *   restores a country's detector after its clean weeks and adds, at a random time
 *   between 01:00 and 05:00 local on a night of the next week, 4 times that hour's
 *   usual rate (at least 2 requests/s) for 30 minutes.
 * - The ceiling, in the same run: an oracle that knows every country's true rate (no
 *   learning), judges every second with no lag, same window and thresholds: the
 *   earliest any detector on this window could fire. detection_delay_ratio = ours / it.
 * - entries_per_s: entries fed per second on one core over the clean weeks, the
 *   generation of the Poisson traffic included: a lower bound on the detector alone.
 *   There is no ceiling for it in this run; the oracle is the ceiling of the delay.
 */
import { GeoDetector, type DetectorOptions, type DetectorOutput } from '../packages/core/src/geo/index.js';
import { median, note, percentile, prng, report, sig } from './lib.js';

const SEED = 20260309;
const START = Date.UTC(2026, 2, 9); // Monday
const WEEK = 7 * 86_400_000;
const LEARN_WEEKS = 1;
const MEASURED_WEEKS = 4;
const TRIALS_PER_COUNTRY = 8;
const SPIKE_MS = 30 * 60_000;
const WINDOW_MS = 60_000;
const THRESHOLDS = { ratio: 3, z: 5, minRate: 1 };
const COUNTRIES = [
  ['FR', 'Europe/Paris', 40],
  ['US', 'America/New_York', 200],
  ['JP', 'Asia/Tokyo', 60],
  ['AU', 'Australia/Sydney', 15],
  ['BR', 'America/Sao_Paulo', 25],
  ['IN', 'Asia/Kolkata', 80],
  ['GB', 'Europe/London', 30],
  ['NZ', 'Pacific/Auckland', 2],
  ['NG', 'Africa/Lagos', 5],
  ['SG', 'Asia/Singapore', 10],
  ['RU', 'Europe/Moscow', 20],
  ['CL', 'America/Santiago', 3],
] as const;

type Country = { code: string; zone: string; peak: number };

const options = (zone: string): DetectorOptions => ({
  windowMs: WINDOW_MS,
  lagMs: 5_000,
  timeZone: zone,
  thresholds: THRESHOLDS,
  warmupSamples: 30,
  alpha: 0.01,
  resolveMs: 120_000,
  cooldownMs: 900_000,
});

/** Local clock reading in a zone, cached per minute (the rate curve moves per minute). */
function localClock(zone: string): (t: number) => { hour: number; weekend: boolean } {
  const format = new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  let minute = NaN;
  let last = { hour: 0, weekend: false };
  return (t) => {
    const m = Math.floor(t / 60_000);
    if (m !== minute) {
      minute = m;
      const parts = Object.fromEntries(format.formatToParts(t).map((p) => [p.type, p.value]));
      last = { hour: Number(parts.hour) + Number(parts.minute) / 60, weekend: parts.weekday === 'Sat' || parts.weekday === 'Sun' };
    }
    return last;
  };
}

/** True requests/s of a clean country at `t`: diurnal, weekly, and a random factor per local day. */
function cleanRate(c: Country, random: () => number): (t: number) => number {
  const clock = localClock(c.zone);
  const days = new Map<number, number>();
  return (t) => {
    const { hour, weekend } = clock(t);
    const day = Math.floor(t / 86_400_000);
    let f = days.get(day);
    if (f === undefined) days.set(day, (f = 0.9 + 0.2 * random()));
    const shape = (1 - Math.cos((2 * Math.PI * (hour - 3)) / 24)) / 2;
    return f * (weekend ? 0.7 : 1) * c.peak * (0.05 + 0.95 * shape);
  };
}

function poisson(lambda: number, random: () => number): number {
  if (lambda > 30) {
    const g = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * g));
  }
  const limit = Math.exp(-lambda);
  let k = 0;
  for (let p = random(); p > limit; p *= random()) k++;
  return k;
}

/** Feeds one entry a second from `from` to `to`; returns the counts it sent (for the oracle). */
function feed(d: GeoDetector, from: number, to: number, rate: (t: number) => number, random: () => number, out: DetectorOutput): Float64Array {
  const counts = new Float64Array(Math.ceil((to - from) / 1000));
  for (let i = 0, t = from; t < to; i++, t += 1000) {
    const n = poisson(rate(t), random);
    counts[i] = n;
    if (n > 0) d.add(t, n, out);
  }
  return counts;
}

/** First second (from `spikeAt`) at which a judge knowing the usual rate exactly, with the same window and thresholds, would fire. */
function oracleDelay(counts: Float64Array, from: number, spikeAt: number, usual: (t: number) => number): number | undefined {
  const seconds = WINDOW_MS / 1000;
  const start = (spikeAt - from) / 1000;
  for (let s = start; s < counts.length; s++) {
    let count = 0;
    let expected = 0;
    for (let i = s - seconds + 1; i <= s; i++) {
      count += counts[i]!;
      expected += usual(from + i * 1000);
    }
    const least = Math.max(expected, 1);
    const z = (2 * (Math.sqrt(count + 3 / 8) - Math.sqrt(expected + 3 / 8))) / Math.sqrt(Math.max(1, 0.01 * least));
    if (count / least >= THRESHOLDS.ratio && z >= THRESHOLDS.z && count / seconds >= THRESHOLDS.minRate) return s - start + 1;
  }
  return undefined;
}

function main(): void {
  const random = prng(SEED);
  const countries: Country[] = COUNTRIES.map(([code, zone, peak]) => ({ code, zone, peak }));
  const cleanEnd = START + (LEARN_WEEKS + MEASURED_WEEKS) * WEEK;
  let falseAlerts = 0;
  let entries = 0;
  let feedMs = 0;
  const delays: number[] = [];
  const oracle: number[] = [];
  let missed = 0;
  let earlyAlerts = 0;
  for (const c of countries) {
    const d = new GeoDetector(options(c.zone));
    const rate = cleanRate(c, random);
    const learning: DetectorOutput = { verdicts: [], learned: 0 };
    feed(d, START, START + LEARN_WEEKS * WEEK, rate, random, learning);
    const measured: DetectorOutput = { verdicts: [], learned: 0 };
    const t0 = performance.now();
    const counts = feed(d, START + LEARN_WEEKS * WEEK, cleanEnd, rate, random, measured);
    feedMs += performance.now() - t0;
    entries += counts.reduce((n, x) => n + (x > 0 ? 1 : 0), 0);
    const fired = measured.verdicts.filter((v) => v.state === 'fired');
    falseAlerts += fired.length;
    for (const v of fired) note(`false alert: ${c.code} at ${new Date(v.at).toISOString()} ratio ${v.ratio.toFixed(2)} z ${v.zScore.toFixed(2)} rate ${v.rate.toFixed(2)}`);

    const learned = d.snapshot();
    const clock = localClock(c.zone);
    for (let trial = 0; trial < TRIALS_PER_COUNTRY; trial++) {
      // A night of the following week, 01:00-05:00 local, at a random minute.
      let spikeAt = cleanEnd + trial * 86_400_000 + Math.floor((random() * 86_400_000) / 60_000) * 60_000;
      while (clock(spikeAt).hour < 1 || clock(spikeAt).hour >= 5) spikeAt += 60_000;
      const from = spikeAt - 2 * 3_600_000;
      const base = cleanRate(c, prng(SEED + trial));
      const extra = Math.max(4 * base(spikeAt), 2 * THRESHOLDS.minRate);
      const spiked = (t: number) => base(t) + (t >= spikeAt && t < spikeAt + SPIKE_MS ? extra : 0);
      // Take up the learned state right where the trial starts (no week of silence to catch up on).
      const restored = GeoDetector.restore(options(c.zone), { ...structuredClone(learned), evaluatedUntil: from - 10_000 });
      const out: DetectorOutput = { verdicts: [], learned: 0 };
      const trialCounts = feed(restored, from, spikeAt + SPIKE_MS, spiked, random, out);
      const first = out.verdicts.find((v) => v.state === 'fired' && v.at >= spikeAt);
      if (out.verdicts.some((v) => v.state === 'fired' && v.at < spikeAt)) earlyAlerts++;
      if (!first) missed++;
      else delays.push((first.at + 5_000 - spikeAt) / 1000);
      const o = oracleDelay(trialCounts, from, spikeAt, base);
      if (o !== undefined) oracle.push(o);
    }
  }
  const countryWeeks = countries.length * MEASURED_WEEKS;
  report(
    'geo',
    {
      countries: countries.map((c) => `${c.code}:${c.zone}:${c.peak}/s`),
      start: new Date(START).toISOString(),
      learn_weeks: LEARN_WEEKS,
      measured_weeks: MEASURED_WEEKS,
      trials: countries.length * TRIALS_PER_COUNTRY,
      spike: '4× the hour (≥2/s) for 30 min, 01:00-05:00 local',
      window_ms: WINDOW_MS,
      lag_ms: 5_000,
      thresholds: THRESHOLDS,
      seed: SEED,
    },
    {
      false_alerts_per_country_week: sig(falseAlerts / countryWeeks),
      false_alerts_total: falseAlerts,
      country_weeks: countryWeeks,
      detection_delay_s: sig(median(delays)),
      detection_delay_p99_s: sig(percentile(delays, 99)),
      detection_delay_max_s: sig(Math.max(...delays)),
      oracle_delay_s: sig(median(oracle)),
      detection_delay_ratio: sig(median(delays) / median(oracle)),
      missed_spikes: missed,
      trial_alerts_before_spike: earlyAlerts,
      entries_per_s: sig(entries / (feedMs / 1000)),
    },
  );
}

main();
