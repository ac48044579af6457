import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { eventPartitionKey, keyPartition } from '@banstream/core';
import type { RequestEvent } from '@banstream/schemas';
import { event } from './aggregator.js';

const MIN = 60_000;

export interface Country {
  code: string;
  zone: string;
  /** First three octets of the /24 all its clients come from. */
  network: string;
}

/**
 * Gives each country a /24 of its own that lands on its own events partition, so
 * each partition carries one country's events in time order however fast a week
 * of them is published (a partition's events more than the grace period behind
 * its newest are late).
 */
export function onDistinctPartitions(countries: readonly Omit<Country, 'network'>[], partitions: number): Country[] {
  const taken = new Set<number>();
  let third = 0;
  return countries.map((c) => {
    for (;;) {
      const network = `10.${20 + Math.floor(third / 256)}.${third % 256}`;
      third++;
      const p = keyPartition(eventPartitionKey(`${network}.1`), partitions);
      if (taken.has(p)) continue;
      taken.add(p);
      return { ...c, network };
    }
  });
}

/** Requests a minute at a local hour of the day: quiet at 02:00, busiest at 14:00. */
export function diurnalPerMinute(localHour: number, trough: number, peak: number): number {
  return trough + ((peak - trough) * (1 - Math.cos((2 * Math.PI * (localHour - 2)) / 24))) / 2;
}

const formats = new Map<string, Intl.DateTimeFormat>();
/** Local hour of the day with its fraction (14.5 = 14:30) in `zone`. */
export function localHour(t: number, zone: string): number {
  let f = formats.get(zone);
  if (!f) formats.set(zone, (f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })));
  const [h, m] = f.format(t).split(':').map(Number);
  return h! + m! / 60;
}

/** The start of the local day in `zone` that `t` falls in (zones change offset only on quarter hours). */
export function localMidnightBefore(t: number, zone: string): number {
  const quarter = 15 * MIN;
  let m = Math.floor(t / quarter) * quarter;
  while (!(localHour(m, zone) === 0 && localHour(m - quarter, zone) !== 0)) m -= quarter;
  return m;
}

/** A seeded PRNG (mulberry32), so a failure is the same on every run. */
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

function poisson(lambda: number, random: () => number): number {
  const limit = Math.exp(-lambda);
  let k = 0;
  for (let p = random(); p > limit; p *= random()) k++;
  return k;
}

/**
 * A country's requests from `from` to `to`, second by second (Poisson counts of
 * `perMinute` at each instant), in time order.
 */
export function trafficOf(country: Country, from: number, to: number, perMinute: (t: number) => number, random: () => number): RequestEvent[] {
  const out: RequestEvent[] = [];
  let rate = 0;
  for (let t = from; t < to; t += 1000) {
    if ((t - from) % MIN === 0) rate = perMinute(t) / 60;
    for (let n = poisson(rate, random); n > 0; n--) out.push(event(`${country.network}.${1 + (out.length % 250)}`, t, { country: country.code }));
  }
  return out;
}

export interface WebhookRequest {
  status: number;
  body: { text: string; blocks: unknown[] };
  raw: string;
  headers: IncomingHttpHeaders;
}

/** A local HTTP server standing in for Slack: answers 500 to the first `failFirst` requests. */
export async function webhookServer(failFirst: number): Promise<{ url: string; requests: WebhookRequest[]; server: Server }> {
  const requests: WebhookRequest[] = [];
  const server = createServer((req, res) => {
    let data = '';
    req.on('data', (d: Buffer) => (data += d.toString()));
    req.on('end', () => {
      const status = requests.length < failFirst ? 500 : 200;
      requests.push({ status, body: JSON.parse(data) as WebhookRequest['body'], raw: data, headers: req.headers });
      res.writeHead(status).end(status === 200 ? 'ok' : 'try again');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('webhook server has no port');
  return { url: `http://127.0.0.1:${address.port}/services/T0000/B0000/XXXXTOKENXXXX`, requests, server };
}

/** Does the signature header match HMAC-SHA256(secret, `v1:<timestamp>:<body>`)? */
export function signedWith(secret: string, r: WebhookRequest): boolean {
  const timestamp = String(r.headers['x-banstream-timestamp']);
  const expected = createHmac('sha256', secret).update(`v1:${timestamp}:${r.raw}`).digest('hex');
  return r.headers['x-banstream-signature'] === `v1=${expected}`;
}
