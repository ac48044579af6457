/**
 * The demo's traffic and policies, shared by `npm run demo` and the end-to-end tests.
 * Pure: times come in as arguments and randomness from a seeded generator, so the
 * same calls give the same requests.
 */
import { eventPartitionKey, keyPartition } from '@banstream/core';
import type { RequestEvent } from '@banstream/schemas';

export type TrafficClass = 'legit' | 'flood' | 'botnet' | 'spike';
export const CLASSES: readonly TrafficClass[] = ['legit', 'flood', 'botnet', 'spike'];
export type Attacker = 'flood' | 'botnet';

export interface DemoRequest {
  at: number;
  cls: TrafficClass;
  ip: string;
  /** What the CDN in front would put in CF-IPCountry (T1: Tor), or none. */
  country: string | null;
  method: 'GET' | 'POST';
  path: string;
  /** For POST /login. */
  user?: string;
  password?: string;
}

export interface Country {
  code: string;
  zone: string;
  /** Share of the world's users. */
  weight: number;
}

/** Whole-hour zones only (local hours start on UTC hours), spread so one is always at night. */
export const COUNTRIES: readonly Country[] = [
  { code: 'US', zone: 'America/New_York', weight: 3 },
  { code: 'MX', zone: 'America/Mexico_City', weight: 1 },
  { code: 'BR', zone: 'America/Sao_Paulo', weight: 1.5 },
  { code: 'GB', zone: 'Europe/London', weight: 1.5 },
  { code: 'DE', zone: 'Europe/Berlin', weight: 1.5 },
  { code: 'NG', zone: 'Africa/Lagos', weight: 1 },
  { code: 'AE', zone: 'Asia/Dubai', weight: 0.5 },
  { code: 'CN', zone: 'Asia/Shanghai', weight: 2 },
  { code: 'JP', zone: 'Asia/Tokyo', weight: 1.5 },
  { code: 'AU', zone: 'Australia/Sydney', weight: 1 },
  { code: 'NZ', zone: 'Pacific/Auckland', weight: 0.5 },
];

export const GOOD_PASSWORD = 'correct-horse-battery-staple';
export const FLOOD_IP = '203.0.113.66';
export const BOTNET_PREFIX = '198.51.100.0/24';
const BOTNET_NET = '198.51.100';
const USERS_PER_COUNTRY = 200;

/** When each attack runs, in ms from the scenario's start; `every` repeats the whole cycle. */
export interface Phases {
  flood: [number, number];
  botnet: [number, number];
  spike: [number, number];
  every?: number;
}

export interface ScenarioOptions {
  seed: number;
  /** Events topic partitions: each country's users share one, so its history replays in time order. */
  partitions: number;
  phases: Phases;
  /** Legitimate requests per second at a weight-1 country's 14:00 peak (the trough at 02:00 is a tenth). */
  peakPerSecond: number;
  floodPerSecond: number;
  botnetPerSecond: number;
  spikePerSecond: number;
}

export const DEMO_SCENARIO: Omit<ScenarioOptions, 'partitions'> = {
  seed: 20261122,
  phases: { flood: [10_000, 50_000], botnet: [20_000, 60_000], spike: [30_000, 110_000], every: 180_000 },
  // Attack rates of real ones (a flood sends hundreds a second, a botnet dozens of logins), so a
  // policy crosses well within a second of the attack starting.
  peakPerSecond: 0.4,
  floodPerSecond: 400,
  botnetPerSecond: 80,
  spikePerSecond: 4,
};

/**
 * The policies a security team would apply for this shop, sized far above what a
 * legitimate client does (a user's IP makes well under one request a minute; a
 * country's /24 fails a few logins a minute at its peak).
 */
export const demoPolicies = (banDuration = '45s') => [
  {
    id: 'demo-flood',
    description: 'One IP over 100 requests in 10 s is banned.',
    mode: 'enforce',
    key: ['ip'],
    threshold: { count: 100, interval: '10s' },
    action: { type: 'ban', banDuration, status: 429 },
  },
  {
    id: 'demo-login-stuffing',
    description: 'A /24 failing over 30 logins a minute is banned.',
    mode: 'enforce',
    match: { methods: ['POST'], paths: ['/login'], statuses: [401] },
    key: ['prefix'],
    threshold: { count: 30, interval: '1m' },
    action: { type: 'ban', banDuration, status: 403 },
  },
];

/** A seeded PRNG (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const formats = new Map<string, Intl.DateTimeFormat>();
/** Local hour with its fraction (14.5 = 14:30) in `zone`. */
export function localHour(t: number, zone: string): number {
  let f = formats.get(zone);
  if (!f) formats.set(zone, (f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })));
  const [h, m] = f.format(t).split(':').map(Number);
  return h! + m! / 60;
}

/** Quiet at 02:00 local time (a tenth of the peak), busiest at 14:00. */
export function dailyFactor(hour: number): number {
  return 0.1 + (0.9 * (1 - Math.cos((2 * Math.PI * (hour - 2)) / 24))) / 2;
}

/** The country deepest in its night at `t` (local hour nearest 03:00): the spike comes from there. */
export function nightCountry(t: number): Country {
  const distance = (c: Country) => Math.abs(localHour(t, c.zone) - 3);
  return [...COUNTRIES].sort((a, b) => distance(a) - distance(b))[0]!;
}

/** The /24 of a country's users: the first 10.<20+i>.x.0/24 that falls on partition i mod `partitions`. */
export function countryNetwork(index: number, partitions: number): string {
  for (let third = 0; ; third++) {
    const network = `10.${20 + index}.${third}`;
    const p = keyPartition(eventPartitionKey(`${network}.1`), partitions);
    if (p === index % partitions) return network;
  }
}

/** Is an address one of the legitimate users' (every country's /24)? */
export function isLegitimateIp(ip: string, partitions: number): boolean {
  return COUNTRIES.some((_c, i) => ip.startsWith(`${countryNetwork(i, partitions)}.`));
}

function poisson(lambda: number, random: () => number): number {
  if (lambda > 30) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * gaussian(random)));
  const limit = Math.exp(-lambda);
  let k = 0;
  for (let p = random(); p > limit; p *= random()) k++;
  return k;
}

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Which attacks run `offset` ms after the start. */
export function activeAttacks(phases: Phases, offset: number): Set<Attacker | 'spike'> {
  const t = phases.every ? offset % phases.every : offset;
  const on = new Set<Attacker | 'spike'>();
  for (const name of ['flood', 'botnet', 'spike'] as const) if (t >= phases[name][0] && t < phases[name][1]) on.add(name);
  return on;
}

/**
 * The whole traffic mix between two instants. `startedAt` is the scenario's start
 * (attack phases count from it); wall time picks each country's local hour.
 */
export class Scenario {
  readonly networks: string[];
  private readonly random: () => number;

  constructor(
    readonly options: ScenarioOptions,
    readonly startedAt: number,
  ) {
    this.random = seeded(options.seed);
    this.networks = COUNTRIES.map((_c, i) => countryNetwork(i, options.partitions));
  }

  /** Legitimate users only, with no attacks: what history looks like. */
  legit(from: number, to: number): DemoRequest[] {
    const out: DemoRequest[] = [];
    COUNTRIES.forEach((c, i) => {
      const rate = c.weight * this.options.peakPerSecond * dailyFactor(localHour(from, c.zone));
      this.spread(from, to, rate, (at) => out.push(this.user(at, i, 'legit')));
    });
    return out.sort((a, b) => a.at - b.at);
  }

  /** Every request due in [from, to): users, and the attacks whose phase is on. */
  between(from: number, to: number): DemoRequest[] {
    const out = this.legit(from, to);
    const on = activeAttacks(this.options.phases, from - this.startedAt);
    const { floodPerSecond, botnetPerSecond, spikePerSecond } = this.options;
    if (on.has('flood')) this.spread(from, to, floodPerSecond, (at) => out.push({ at, cls: 'flood', ip: FLOOD_IP, country: null, method: 'GET', path: '/api/products' }));
    if (on.has('botnet')) {
      this.spread(from, to, botnetPerSecond, (at) =>
        out.push({
          at,
          cls: 'botnet',
          ip: `${BOTNET_NET}.${10 + Math.floor(this.random() * 60)}`,
          country: 'T1',
          method: 'POST',
          path: '/login',
          user: `victim${Math.floor(this.random() * 10_000)}@example.com`,
          password: `guess-${Math.floor(this.random() * 1e6)}`,
        }),
      );
    }
    if (on.has('spike')) {
      const index = COUNTRIES.indexOf(nightCountry(this.startedAt));
      this.spread(from, to, spikePerSecond, (at) => out.push({ ...this.user(at, index, 'spike'), method: 'GET', path: '/api/products' }));
    }
    return out.sort((a, b) => a.at - b.at);
  }

  private spread(from: number, to: number, perSecond: number, emit: (at: number) => void): void {
    for (let n = poisson((perSecond * (to - from)) / 1000, this.random); n > 0; n--) emit(from + Math.floor(this.random() * (to - from)));
  }

  /** A user of country i: browses, sometimes logs in and now and then mistypes the password. */
  private user(at: number, i: number, cls: TrafficClass): DemoRequest {
    const n = 1 + Math.floor(this.random() * USERS_PER_COUNTRY);
    const base = { at, cls, ip: `${this.networks[i]}.${n}`, country: COUNTRIES[i]!.code };
    const r = this.random();
    if (r < 0.4) return { ...base, method: 'GET', path: '/' };
    if (r < 0.9) return { ...base, method: 'GET', path: '/api/products' };
    const typo = this.random() < 0.1;
    return { ...base, method: 'POST', path: '/login', user: `user${n}@${COUNTRIES[i]!.code.toLowerCase()}.example`, password: typo ? 'correct-horse' : GOOD_PASSWORD };
  }
}

/** The event an edge would publish for a request it served (history is made of these). */
export function eventOf(r: DemoRequest, eventId: string): RequestEvent {
  const status = r.method === 'POST' ? (r.password === GOOD_PASSWORD ? 200 : 401) : 200;
  return {
    eventId,
    timestamp: r.at,
    ip: r.ip,
    country: r.country,
    region: null,
    asn: null,
    method: r.method,
    host: 'shop.example',
    path: r.path,
    route: r.path,
    status,
    userId: null,
    apiKeyHash: null,
    headers: {},
    edgeId: 'history',
    latencyMs: null,
  };
}

/** The recent range is never shorter than this: a low-traffic country gets events in it, and so a judged baseline. */
const MIN_RECENT_HISTORY_MS = 5 * 60_000;

/**
 * History for the geographic baselines: the hours of the week the next `hoursAhead`
 * hours fall in, a week ago, then the current hour up to `now`, so the detector has
 * learned every hour the run will judge (and no silence is learned in them).
 * Both ranges start on the hour: the detector learns the silence between them as
 * quiet windows, so a range starting inside an hour would be judged against a
 * baseline that hour's silent part had just pulled towards zero (a false alert).
 * In the first minutes of an hour both start an hour earlier: seconds of recent
 * history left a small country with no event to be judged by (an e2e test waiting on
 * every country's baseline timed out when it ran just after the hour).
 */
export function historyRanges(now: number, hoursAhead: number): [number, number][] {
  const HOUR = 3_600_000;
  const WEEK = 7 * 24 * HOUR;
  const recentFrom = Math.floor((now - MIN_RECENT_HISTORY_MS) / HOUR) * HOUR;
  const aheadUntil = (Math.floor(now / HOUR) + hoursAhead + 1) * HOUR;
  return [
    [recentFrom - WEEK, aheadUntil - WEEK],
    [recentFrom, now],
  ];
}
