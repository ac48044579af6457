/**
 * In-process checks with 1,000,000 active bans: the enforcer's own local decision
 * (attributes of the request, allowlist, bans on the address, its networks and each
 * applicable ban policy's subject, throttle from shared counts) over a stream of
 * requests of which 45% come from banned addresses. Ceiling: a bare Map lookup loop
 * over the same addresses. Floor: what the ban lookup alone costs the enforcer, with
 * nothing else of a check: the address text to a number (no validation), one probe of
 * the enforcer's own Int32Index of the million bans and a read of the ban's expiry from
 * a row of four doubles, as the enforcer's BanStore keeps it. On
 * this machine that is mostly memory latency, and it bounds local_checks_per_s from
 * above, but loosely: with nothing between them, the CPU overlaps the cache misses of
 * consecutive probes, which a check with work between its probes cannot. Hence a
 * second floor, `floor_with_attributes_checks_per_s`: the request's attributes (as a
 * check builds them) and then the address ban's denial as a check gets it
 * (BanCache.addressDenial), nothing else: the misses exposed as in a check. Every
 * loop is timed after an untimed warm-up of its own, as a process checking without
 * pause would be. The enforcer code is the compiled build (dist), as services run it.
 */
import { Allowlist, attributesFromRequest, compilePolicy, PolicyBook } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import { BanCache } from '../../services/enforcer/dist/cache/ban-cache.js';
import { Int32Index } from '../../services/enforcer/dist/cache/int32-index.js';
import { CountCache } from '../../services/enforcer/dist/cache/count-cache.js';
import { decideLocally } from '../../services/enforcer/dist/decide.js';
import { collect, median, note, prng } from '../lib.js';
import { BENCH_POLICIES, benchBan, ipOf } from './local-fixture.js';

const BANS = 1_000_000;
const CHECKS = 2_000_000;
const WARM_UP = 200_000;
const RUNS = 5;

export interface LocalFigures {
  local_checks_per_s: number;
  /** The same checks, each request with the dozen headers a browser sends. */
  local_checks_per_s_browser_headers: number;
  ceiling_lookups_per_s: number;
  local_ratio: number;
  floor_lookups_per_s: number;
  floor_with_attributes_checks_per_s: number;
  active_bans: number;
}

export function measureLocal(): LocalFigures {
  note(`local: ${BANS} bans`);
  const now = Date.now();
  const bans = new BanCache();
  const ceilingMap = new Map<string, Ban>();
  const floorIndex = new Int32Index();
  const floorRows = new Float64Array(BANS * 4);
  for (let i = 0; i < BANS; i++) {
    const ban = benchBan(i, now); // every other address is banned
    const subject = ban.subject;
    bans.observe(subject, ban);
    ceilingMap.set(subject, ban);
    floorIndex.set(ipv4Number(ipOf(i * 2)), i);
    floorRows[i * 4] = ban.expiresAt;
  }
  const policies = new PolicyBook();
  for (const record of BENCH_POLICIES) policies.apply(record.id, record);
  void compilePolicy;
  const state = { bans, counts: new CountCache(), allowlist: new Allowlist(), policies };
  const random = prng(7);
  const ips: string[] = [];
  // ~45% banned. Flat strings, as an address read off a socket or out of a parsed JSON
  // body is: a template literal of 13 characters or more is a rope (a cons string) in
  // V8, and every read of its characters goes through it (attributes 20% slower).
  for (let i = 0; i < 65_536; i++) ips.push(Buffer.from(ipOf(Math.floor(random() * BANS * 2 * 1.1)), 'latin1').toString('latin1'));
  const paths = ['/', '/api/items', '/login', '/products/1'];
  const headers = { 'user-agent': 'bench' };
  // What a browser sends: the check reads none of it unless a policy does (headers are normalised when first read).
  const browserHeaders = {
    host: 'shop.example',
    connection: 'keep-alive',
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
    accept: 'text/html,application/xhtml+xml',
    'accept-language': 'en-GB,en;q=0.9',
    'accept-encoding': 'gzip, deflate, br',
    referer: 'https://shop.example/',
    cookie: 'session=abc123; theme=dark',
    'sec-fetch-mode': 'navigate',
    'sec-fetch-site': 'same-origin',
    'upgrade-insecure-requests': '1',
    'x-forwarded-for': '203.0.113.7',
  };
  const uniform = () => 0.5;
  const reasonOf = (ban: Ban) => ban.reason;

  let sink = 0;
  // Each loop runs WARM_UP iterations untimed before it is timed, so that none pays for
  // the cache and TLB state the loop before it left (measured: the first check loop
  // after the Map and floor loops ran up to 20% slower than the same loop run second).
  const loops = {
    local: (n: number) => {
      for (let i = 0; i < n; i++) {
        const attrs = attributesFromRequest({ ip: ips[i & 65_535]!, method: 'GET', host: 'shop.example', path: paths[i & 3]!, headers, timestamp: now });
        sink += decideLocally(state, attrs, now, uniform).candidates.length;
      }
    },
    browser: (n: number) => {
      for (let i = 0; i < n; i++) {
        const attrs = attributesFromRequest({ ip: ips[i & 65_535]!, method: 'GET', host: 'shop.example', path: paths[i & 3]!, headers: browserHeaders, timestamp: now });
        sink += decideLocally(state, attrs, now, uniform).candidates.length;
      }
    },
    ceiling: (n: number) => {
      for (let i = 0; i < n; i++) if (ceilingMap.get(`ip:${ips[i & 65_535]!}`) !== undefined) sink++;
    },
    floor: (n: number) => {
      for (let i = 0; i < n; i++) {
        const entry = floorIndex.get(ipv4Number(ips[i & 65_535]!));
        if (entry >= 0 && floorRows[entry * 4]! > now) sink++;
      }
    },
    attributesFloor: (n: number) => {
      for (let i = 0; i < n; i++) {
        const attrs = attributesFromRequest({ ip: ips[i & 65_535]!, method: 'GET', host: 'shop.example', path: paths[i & 3]!, headers, timestamp: now });
        if (bans.addressDenial(attrs.ipAddress!, now, reasonOf) !== undefined) sink++;
      }
    },
  };
  const runs: Record<keyof typeof loops, number[]> = { local: [], browser: [], ceiling: [], floor: [], attributesFloor: [] };
  const timed = (name: keyof typeof loops) => {
    loops[name](WARM_UP);
    const t = performance.now();
    loops[name](CHECKS);
    runs[name].push((CHECKS / (performance.now() - t)) * 1000);
    return Math.round(runs[name].at(-1)!);
  };
  // The million bans' setup leaves garbage whose collection is no check's cost.
  collect();
  for (let run = 0; run < RUNS; run++) {
    const local = timed('local');
    const browser = timed('browser');
    const ceiling = timed('ceiling');
    const floor = timed('floor');
    const attributesFloor = timed('attributesFloor');
    note(`local run ${run + 1}: ${local} checks/s (${browser} with a browser's headers), ceiling ${ceiling} lookups/s, floor ${floor} lookups/s, with attributes ${attributesFloor}/s`);
  }
  if (sink < 0) throw new Error('unreachable');
  const local = median(runs.local);
  const ceiling = median(runs.ceiling);
  return {
    local_checks_per_s: Math.round(local),
    local_checks_per_s_browser_headers: Math.round(median(runs.browser)),
    ceiling_lookups_per_s: Math.round(ceiling),
    local_ratio: Number((local / ceiling).toFixed(3)),
    floor_lookups_per_s: Math.round(median(runs.floor)),
    floor_with_attributes_checks_per_s: Math.round(median(runs.attributesFloor)),
    active_bans: bans.size,
  };
}

/** Dotted-quad text to its 32-bit number, for the bench's own canonical addresses only. */
function ipv4Number(text: string): number {
  let value = 0;
  let octet = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      value = (value << 8) | octet;
      octet = 0;
    } else octet = octet * 10 + c - 0x30;
  }
  return (value << 8) | octet;
}
