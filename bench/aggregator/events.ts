/**
 * The synthetic events of the aggregator benchmark, generated from a seed: a pool of
 * client IPs spread over many network prefixes (IPv4 /24s and a few IPv6 /48s), a few
 * hot IPs, 20% authenticated users, ~30 countries, mostly `GET /` and some failed
 * `POST /login`. Events are generated in event-time order over the last spanMs, then
 * grouped by their partition key (the client's /24 or /48) into RequestEventBatch
 * records of at most BATCH_EVENTS events, as an edge does; the batches are ordered by
 * their first event's time, so each partition's event time moves forward except
 * within the span of one batch.
 *
 * Kept compact: per-event facts live in typed arrays; event objects are only built
 * when a batch is encoded.
 */
import { eventPartitionKey } from '@banstream/core';
import type { RequestEvent } from '@banstream/schemas';
import { prng } from '../lib.js';

export interface EventShape {
  events: number;
  seed: number;
  /** Event times are spread evenly over [start, start + spanMs): see eventSpanMs. */
  spanMs: number;
  v4Prefixes: number;
  v6Prefixes: number;
  hostsPerPrefix: number;
  hotIps: number;
  /** Share of all events sent by the hot IPs together. */
  hotShare: number;
  users: number;
  userShare: number;
  loginShare: number;
  /** Share of logins answered 401. */
  loginFailureShare: number;
  batchEvents: number;
  /**
   * Costs mode (`--costs`): every event carries a cost, 5 for a login, 3 for one GET in
   * ten, else 1; without it, events leave the field out (the default, 1).
   */
  costs?: boolean;
}

export const DEFAULT_SHAPE: Omit<EventShape, 'events' | 'spanMs'> = {
  seed: 20_250_101,
  v4Prefixes: 760,
  v6Prefixes: 40,
  hostsPerPrefix: 250,
  hotIps: 10,
  hotShare: 0.02,
  users: 40_000,
  userShare: 0.2,
  loginShare: 0.1,
  loginFailureShare: 0.7,
  batchEvents: 500,
};

/** Weighted roughly like real traffic: a few large countries, a long tail. */
const COUNTRIES: ReadonlyArray<readonly [string, number]> = [
  ['US', 20],
  ['DE', 8],
  ['FR', 8],
  ['GB', 7],
  ['BR', 5],
  ['IN', 5],
  ['JP', 4],
  ['CN', 4],
  ['CA', 3],
  ['NL', 3],
  ['ES', 3],
  ['IT', 3],
  ['PL', 2],
  ['SE', 2],
  ['RU', 2],
  ['KR', 2],
  ['AU', 2],
  ['MX', 2],
  ['TR', 2],
  ['ID', 2],
  ['VN', 1],
  ['UA', 1],
  ['AR', 1],
  ['ZA', 1],
  ['NG', 1],
  ['EG', 1],
  ['BE', 1],
  ['CH', 1],
  ['SG', 1],
  ['RO', 1],
];

const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/126.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Firefox/128.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5) Mobile/15E148',
  'curl/8.5.0',
  'python-requests/2.32.3',
];

const EDGES = ['edge-a1', 'edge-a2', 'edge-b1', 'edge-b2'];
const HOST = 'shop.example.com';

/** Request kinds: GET / 200, POST /login 401, POST /login 200. */
const KIND_GET = 0;
const KIND_LOGIN_FAIL = 1;
const KIND_LOGIN_OK = 2;

/** The longest time one batch record should cover (see eventSpanMs). */
export const BATCH_SPAN_TARGET_MS = 2_000;

/**
 * How much event time the preload covers. A consumer judges lateness per partition
 * (the aggregator: an event more than its grace, 5 s by default, behind the newest
 * event of its partition is late and not counted). Batches are ordered by their first
 * event, so a partition runs behind by at most one batch's span: the span is chosen so
 * that a key's batch of `batchEvents` covers about BATCH_SPAN_TARGET_MS, within
 * [1 s, 2 min]. With the defaults, 2,000,000 events cover 10 s (200k requests/s).
 */
export function eventSpanMs(shape: Omit<EventShape, 'spanMs'>): number {
  const keys = shape.v4Prefixes + shape.v6Prefixes;
  const batchesPerKey = shape.events / keys / shape.batchEvents;
  return Math.round(Math.min(120_000, Math.max(1_000, BATCH_SPAN_TARGET_MS * batchesPerKey)));
}

export interface Batch {
  /** The Kafka record key: the /24 or /48 of every event in the batch. */
  key: string;
  /** Event indexes of this batch, in time order. */
  events: Uint32Array;
}

export interface EventSet {
  shape: EventShape;
  startMs: number;
  ips: string[];
  /** Batches ordered by their first event's time. */
  batches: Batch[];
  distinctKeys: number;
  /** The longest event-time span of one batch record, ms. */
  maxBatchSpanMs: number;
  /** Builds the RequestEventBatch value of one batch. */
  batchValue(batch: Batch): { events: RequestEvent[] };
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function base32(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = CROCKFORD[n % 32]! + out;
    n = Math.floor(n / 32);
  }
  return out;
}

function pickWeighted(random: () => number, weights: ReadonlyArray<readonly [string, number]>, total: number): string {
  let r = random() * total;
  for (const [value, w] of weights) {
    r -= w;
    if (r < 0) return value;
  }
  return weights[weights.length - 1]![0];
}

export function generateEvents(shape: EventShape, startMs: number): EventSet {
  const random = prng(shape.seed);
  const int = (n: number): number => Math.floor(random() * n);

  // Prefixes: distinct public-looking /24s and /48s under the documentation block.
  const prefixCount = shape.v4Prefixes + shape.v6Prefixes;
  const prefixBase: string[] = [];
  const seen = new Set<string>();
  while (prefixBase.length < shape.v4Prefixes) {
    const a = 11 + int(212);
    if (a === 127 || a === 100 || a === 172 || a === 192 || a === 169) continue;
    const base = `${a}.${int(256)}.${int(256)}`;
    if (!seen.has(base)) {
      seen.add(base);
      prefixBase.push(base);
    }
  }
  while (prefixBase.length < prefixCount) {
    const base = `2001:db8:${(1 + int(0xfffe)).toString(16)}`;
    if (!seen.has(base)) {
      seen.add(base);
      prefixBase.push(base);
    }
  }
  const countryTotal = COUNTRIES.reduce((s, [, w]) => s + w, 0);
  const prefixCountry = prefixBase.map(() => pickWeighted(random, COUNTRIES, countryTotal));
  const prefixAsn = prefixBase.map(() => 1_000 + int(400_000));

  // IPs: every prefix holds hostsPerPrefix clients (RFC 5952 text for IPv6).
  const ips: string[] = [];
  const ipPrefix: number[] = [];
  for (let p = 0; p < prefixCount; p++) {
    for (let h = 1; h <= shape.hostsPerPrefix; h++) {
      ips.push(p < shape.v4Prefixes ? `${prefixBase[p]}.${h}` : `${prefixBase[p]}:${h.toString(16)}::1`);
      ipPrefix.push(p);
    }
  }
  const keys = prefixBase.map((_, p) => eventPartitionKey(ips[p * shape.hostsPerPrefix]!));
  const hot = Array.from({ length: shape.hotIps }, () => int(ips.length));

  const n = shape.events;
  const ipOf = new Uint32Array(n);
  const kind = new Uint8Array(n);
  const user = new Int32Array(n);
  const agent = new Uint8Array(n);
  const edge = new Uint8Array(n);
  const latency = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    ipOf[i] = hot.length > 0 && random() < shape.hotShare ? hot[int(hot.length)]! : int(ips.length);
    const login = random() < shape.loginShare;
    kind[i] = !login ? KIND_GET : random() < shape.loginFailureShare ? KIND_LOGIN_FAIL : KIND_LOGIN_OK;
    user[i] = random() < shape.userShare ? int(shape.users) : -1;
    agent[i] = int(USER_AGENTS.length);
    edge[i] = int(EDGES.length);
    latency[i] = 0.2 + random() * 40;
  }

  // Group by partition key, keeping time order inside each key (a stable counting sort).
  const perKey = new Uint32Array(prefixCount);
  for (let i = 0; i < n; i++) perKey[ipPrefix[ipOf[i]!]!]!++;
  const start = new Uint32Array(prefixCount + 1);
  for (let p = 0; p < prefixCount; p++) start[p + 1] = start[p]! + perKey[p]!;
  const fill = start.slice(0, prefixCount);
  const grouped = new Uint32Array(n);
  for (let i = 0; i < n; i++) grouped[fill[ipPrefix[ipOf[i]!]!]!++] = i;

  // Each key's events in ceil(count / batchEvents) batches of near-equal size.
  const batches: Batch[] = [];
  let distinctKeys = 0;
  for (let p = 0; p < prefixCount; p++) {
    const count = perKey[p]!;
    if (count === 0) continue;
    distinctKeys++;
    const parts = Math.ceil(count / shape.batchEvents);
    for (let b = 0; b < parts; b++) {
      const from = start[p]! + Math.floor((b * count) / parts);
      const to = start[p]! + Math.floor(((b + 1) * count) / parts);
      batches.push({ key: keys[p]!, events: grouped.subarray(from, to) });
    }
  }
  // Event indexes are in time order, so the first index orders batches by time.
  batches.sort((a, b) => a.events[0]! - b.events[0]!);

  const runTag = base32(Math.floor(random() * 32 ** 6), 6);
  const timeOf = (i: number): number => startMs + Math.floor((i * shape.spanMs) / n);
  let maxBatchSpanMs = 0;
  for (const b of batches) maxBatchSpanMs = Math.max(maxBatchSpanMs, timeOf(b.events[b.events.length - 1]!) - timeOf(b.events[0]!));
  const event = (i: number): RequestEvent => {
    const ip = ipOf[i]!;
    const p = ipPrefix[ip]!;
    const k = kind[i]!;
    const path = k === KIND_GET ? '/' : '/login';
    const timestamp = timeOf(i);
    return {
      eventId: `${base32(timestamp, 10)}${runTag}${base32(i, 10)}`,
      timestamp,
      ip: ips[ip]!,
      country: prefixCountry[p]!,
      region: null,
      asn: prefixAsn[p]!,
      method: k === KIND_GET ? 'GET' : 'POST',
      host: HOST,
      path,
      route: path,
      status: k === KIND_LOGIN_FAIL ? 401 : 200,
      userId: user[i]! < 0 ? null : `u${user[i]}`,
      apiKeyHash: null,
      headers: { 'user-agent': USER_AGENTS[agent[i]!]! },
      edgeId: EDGES[edge[i]!]!,
      latencyMs: latency[i]!,
      ...(shape.costs === true ? { cost: k !== KIND_GET ? 5 : i % 10 === 0 ? 3 : 1 } : {}),
    };
  };

  return {
    shape,
    startMs,
    ips,
    batches,
    distinctKeys,
    maxBatchSpanMs,
    batchValue: (batch) => ({ events: Array.from(batch.events, event) }),
  };
}
