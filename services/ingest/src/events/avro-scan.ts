import { canonicalIpv4At, isNormalPathBytes, MAX_COST, normaliseHost, tryParseIp } from '@banstream/core';
import { avroLong, type EncodedEvent } from '@banstream/edge';
import { AvroCursor, OFF_FAST_PATH, sameBytes, SINGLE_OBJECT_HEADER_LENGTH } from '@banstream/schemas';
import type { GeoLookup, GeoOutcome } from '../geo/enrich.js';
import { eventKey } from './event-key.js';
import { EVENT_RULES, FORBIDDEN_HEADERS } from './event-rules.js';

export interface ScannedBatch {
  events: EncodedEvent[];
  geo: Record<GeoOutcome, number>;
}

/**
 * The fast path for Avro batches: walks the bytes of a RequestEventBatch without
 * building objects, and when every event is already valid and in normal form (what
 * the validator would return unchanged) hands each event's own bytes on, with the
 * country spliced in from the geography database. Anything else (a rule broken,
 * lower-case method, a non-canonical IP, a path not in normal form, non-ASCII text,
 * another writer schema) gives undefined: the caller then decodes, validates and
 * normalises (the slow path), which also words the errors. A test checks both paths give the same events.
 */
export function scanBatch(body: Buffer, fingerprint: bigint, geo: GeoLookup | undefined, latestMs: number): ScannedBatch | undefined {
  if (body.length < SINGLE_OBJECT_HEADER_LENGTH || body[0] !== 0xc3 || body[1] !== 0x01 || body.readBigUInt64LE(2) !== fingerprint) return undefined;
  const c = new AvroCursor(body, SINGLE_OBJECT_HEADER_LENGTH);
  const out: ScannedBatch = { events: [], geo: { kept: 0, filled: 0, unknown: 0 } };
  try {
    for (let n = c.blockCount(); n > 0; n = c.blockCount()) {
      for (let i = 0; i < n; i++) out.events.push(scanEvent(c, geo, out.geo, latestMs));
    }
    return c.pos === body.length ? out : undefined;
  } catch (error) {
    if (error === OFF_FAST_PATH) return undefined;
    throw error;
  }
}

/** The validator's limits, read from the same rules so both paths refuse the same things. */
const max = (field: string) => EVENT_RULES[field]?.maxLength ?? Number.MAX_SAFE_INTEGER;
const LIMITS = {
  eventId: max('eventId'),
  ip: max('ip'),
  host: max('host'),
  path: max('path'),
  route: max('route'),
  userId: max('userId'),
  edgeId: max('edgeId'),
  headerValue: EVENT_RULES.headers?.values?.maxLength ?? Number.MAX_SAFE_INTEGER,
  headers: EVENT_RULES.headers?.maxProperties ?? Number.MAX_SAFE_INTEGER,
};
/** RFC 9110 token characters. */
const TOKEN = new Uint8Array(128);
for (const ch of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TOKEN[ch.charCodeAt(0)] = 1;
const isUpper = (b: number) => b >= 0x41 && b <= 0x5a;
const isLower = (b: number) => b >= 0x61 && b <= 0x7a;
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;

/** `latestMs`: the latest event time accepted (TimeBound); later is the slow path's to refuse and word. */
function scanEvent(c: AvroCursor, geo: GeoLookup | undefined, counts: Record<GeoOutcome, number>, latestMs: number): EncodedEvent {
  const b = c.buf;
  const start = c.pos;
  c.ascii(1, LIMITS.eventId);
  const timestamp = c.long();
  if (timestamp < 1 || timestamp > latestMs) throw OFF_FAST_PATH;
  // IPv4 in canonical form is read off the bytes, its key and geography found by number;
  // anything else is parsed as text (and must already be canonical).
  const ipFrom = c.ascii(1, LIMITS.ip);
  const ipv4 = canonicalIpv4At(b, ipFrom, c.pos);
  let ipText: string | undefined;
  let key: string;
  if (ipv4 >= 0) key = eventKey(ipv4);
  else {
    ipText = b.toString('latin1', ipFrom, c.pos);
    const ip = tryParseIp(ipText);
    if (ip === undefined || ip.text !== ipText) throw OFF_FAST_PATH;
    key = eventKey(ip);
  }
  const countryAt = c.pos;
  const hasCountry = c.union();
  if (hasCountry) {
    const s = c.ascii(2, 2);
    if (!isUpper(b[s]!) || !isUpper(b[s + 1]!)) throw OFF_FAST_PATH;
  }
  const regionAt = c.pos;
  const hasRegion = c.union();
  if (hasRegion) checkRegion(b, c.ascii(4, 6), c.pos);
  const asnAt = c.pos;
  const hasAsn = c.union();
  if (hasAsn) {
    const asn = c.long();
    if (asn < 0 || asn > 0xffffffff) throw OFF_FAST_PATH;
  }
  const asnEnd = c.pos;
  for (let i = c.ascii(1, 16); i < c.pos; i++) if (!TOKEN[b[i]!] || isLower(b[i]!)) throw OFF_FAST_PATH; // method, upper case
  const hostFrom = c.ascii(1, LIMITS.host);
  if (!plainLowerCaseHost(b, hostFrom, c.pos)) {
    const host = b.toString('latin1', hostFrom, c.pos);
    if (normaliseHost(host) !== host) throw OFF_FAST_PATH;
  }
  // In normal form (no query, escape, dot segment or `//` that normalisePath would change): else the slow path normalises it.
  if (!isNormalPathBytes(b, c.ascii(1, LIMITS.path), c.pos)) throw OFF_FAST_PATH;
  if (c.union()) c.ascii(0, LIMITS.route);
  const status = c.int();
  if (status !== 0 && (status < 100 || status > 999)) throw OFF_FAST_PATH;
  if (c.union()) c.ascii(0, LIMITS.userId);
  if (c.union()) {
    for (let i = c.ascii(64, 64); i < c.pos; i++) if (!isDigit(b[i]!) && !(b[i]! >= 0x61 && b[i]! <= 0x66)) throw OFF_FAST_PATH; // lower-case hex
  }
  scanHeaders(c);
  c.ascii(1, LIMITS.edgeId);
  if (c.union()) {
    const latency = c.double();
    if (!Number.isFinite(latency) || latency < 0) throw OFF_FAST_PATH;
  }
  const cost = c.int();
  if (cost < 1 || cost > MAX_COST) throw OFF_FAST_PATH; // refused, and worded, by the slow path
  const end = c.pos;
  if (hasCountry) {
    counts.kept++;
    return { key, body: b.subarray(start, end), timestamp };
  }
  const info = geo === undefined ? undefined : ipText === undefined ? geo.lookupIpv4(ipv4) : geo.lookup(ipText);
  if (info === undefined) {
    if (geo !== undefined) counts.unknown++;
    return { key, body: b.subarray(start, end), timestamp };
  }
  counts.filled++;
  // As enrichGeo: the country, and region and ASN only where the event has none.
  const country = unionString(info.country);
  const region = hasRegion || info.region === null ? undefined : unionString(info.region);
  const asn = hasAsn || info.asn === null ? undefined : unionLong(info.asn);
  const regionLength = region?.length ?? asnAt - regionAt;
  const asnLength = asn?.length ?? asnEnd - asnAt;
  const out = spliceSpace(countryAt - start + country.length + regionLength + asnLength + end - asnEnd);
  let at = copyRange(b, start, countryAt, out, 0);
  at = copyRange(country, 0, country.length, out, at);
  at = region ? copyRange(region, 0, region.length, out, at) : copyRange(b, regionAt, asnAt, out, at);
  at = asn ? copyRange(asn, 0, asn.length, out, at) : copyRange(b, asnAt, asnEnd, out, at);
  copyRange(b, asnEnd, end, out, at);
  return { key, body: out, timestamp };
}

/** No upper case, no colon, no trailing dot: normaliseHost leaves such ASCII as it is, no string needed to know. */
function plainLowerCaseHost(b: Buffer, from: number, to: number): boolean {
  if (b[to - 1] === 0x2e) return false;
  for (let i = from; i < to; i++) if (isUpper(b[i]!) || b[i] === 0x3a) return false;
  return true;
}

/**
 * Room for an event with its country spliced in, cut from a shared chunk: one
 * allocation per 64 KiB of events instead of one per event. A chunk lives as long as
 * any event in it waits to be sent; events leave the buffer in order, so chunks do too.
 */
const SPLICE_CHUNK_BYTES = 64 * 1024;
let spliceChunk = Buffer.allocUnsafeSlow(SPLICE_CHUNK_BYTES);
let spliceAt = 0;

function spliceSpace(size: number): Buffer {
  if (size > SPLICE_CHUNK_BYTES / 4) return Buffer.allocUnsafe(size);
  if (spliceAt + size > SPLICE_CHUNK_BYTES) {
    spliceChunk = Buffer.allocUnsafeSlow(SPLICE_CHUNK_BYTES);
    spliceAt = 0;
  }
  const out = spliceChunk.subarray(spliceAt, spliceAt + size);
  spliceAt += size;
  return out;
}

/** A plain loop for a few dozen bytes; past that Buffer#copy's native call (about 60 ns here) is cheaper. */
function copyRange(from: Buffer, start: number, end: number, to: Buffer, at: number): number {
  if (end - start >= 40) return at + from.copy(to, at, start, end);
  for (let i = start; i < end; i++) to[at++] = from[i]!;
  return at;
}

/** `^[A-Z]{2}-[A-Z0-9]{1,3}$`, upper case only (lower case is the slow path's to normalise). */
function checkRegion(b: Buffer, from: number, to: number): void {
  if (!isUpper(b[from]!) || !isUpper(b[from + 1]!) || b[from + 2] !== 0x2d) throw OFF_FAST_PATH;
  for (let i = from + 3; i < to; i++) if (!isUpper(b[i]!) && !isDigit(b[i]!)) throw OFF_FAST_PATH;
}

/** Lower-case token names, no credentials, no name twice, values within the limit; compared as bytes, no strings made. */
/** Where the names of the event being scanned start and end: reused, the scan is synchronous and allocates nothing per event. */
const NAME_SLOTS = Math.min(LIMITS.headers, 256);
const nameStarts = new Int32Array(NAME_SLOTS);
const nameEnds = new Int32Array(NAME_SLOTS);

function scanHeaders(c: AvroCursor): void {
  const b = c.buf;
  let names = 0;
  for (let n = c.blockCount(); n > 0; n = c.blockCount()) {
    if (names + n > NAME_SLOTS) throw OFF_FAST_PATH; // over the rule's limit, or more than the slots: the slow path says which
    for (let i = 0; i < n; i++) {
      const from = c.ascii(1, 64);
      const to = c.pos;
      for (let j = from; j < to; j++) if (!TOKEN[b[j]!] || isUpper(b[j]!)) throw OFF_FAST_PATH;
      for (const name of FORBIDDEN_NAMES) if (sameBytes(b, from, to, name, 0, name.length)) throw OFF_FAST_PATH;
      for (let k = 0; k < names; k++) if (sameBytes(b, from, to, b, nameStarts[k]!, nameEnds[k]!)) throw OFF_FAST_PATH;
      nameStarts[names] = from;
      nameEnds[names] = to;
      names++;
      c.ascii(0, LIMITS.headerValue);
    }
  }
}

const FORBIDDEN_NAMES = [...FORBIDDEN_HEADERS].map((name) => Buffer.from(name, 'latin1'));

/** Few distinct countries and regions: each is encoded once. */
const encodedText = new Map<string, Buffer>();

function unionString(text: string): Buffer {
  let encoded = encodedText.get(text);
  if (encoded === undefined) {
    const bytes = Buffer.from(text, 'utf8');
    encoded = Buffer.concat([UNION_SECOND, avroLong(bytes.length), bytes]);
    if (encodedText.size < 10_000) encodedText.set(text, encoded);
  }
  return encoded;
}

function unionLong(n: number): Buffer {
  return Buffer.concat([UNION_SECOND, avroLong(n)]);
}

/** Branch 1 of a `["null", T]` union, as a zigzag long. */
const UNION_SECOND = Uint8Array.of(2);
