import { BanstreamError } from '../errors.js';

/**
 * IP address parsing and canonical text. The enforcer parses one address per
 * request, so this is a hand-written scanner: no regular expressions, no `net`
 * module, one small allocation for the bytes (for a canonical IPv4 text, only if
 * they are asked for) and none for an IPv4 text.
 *
 * Accepted: dotted-quad IPv4 (no leading zeros: `010` could mean octal), any
 * RFC 4291 IPv6 text including `::` and an embedded IPv4 tail, upper or lower
 * case. A zone id (`fe80::1%eth0`) is stripped: it names the receiving host's
 * interface, not the client, and the same client must give one subject whichever
 * interface it came in on. IPv4-mapped IPv6 (`::ffff:192.0.2.1`, `::ffff:c000:201`)
 * becomes the IPv4 address, so a dual-stack socket and an IPv4 one agree.
 * Rejected: brackets, ports, spaces, prefixes, empty and over-long text.
 */
export interface IpAddress {
  readonly family: 4 | 6;
  /** 4 or 16 bytes in network order; never mutate, it may be shared. */
  readonly bytes: Uint8Array;
  /** Canonical text: dotted quad, or RFC 5952 (lower case, longest zero run as `::`). */
  readonly text: string;
  /**
   * An IPv4 address as one int32 (first byte highest), set when it was parsed from
   * canonical text, the common case; otherwise read `bytes`.
   */
  readonly int32?: number | undefined;
}

/**
 * An IPv4 address parsed from canonical text: its bytes are made only when asked for
 * (prefix subjects), as a check that only looks the address up needs its int32 alone.
 */
class Ipv4Address implements IpAddress {
  readonly family = 4;
  #bytes: Uint8Array | undefined = undefined;

  constructor(
    readonly text: string,
    readonly int32: number,
  ) {}

  get bytes(): Uint8Array {
    if (this.#bytes === undefined) {
      const v4 = this.int32;
      const bytes = new Uint8Array(4);
      bytes[0] = v4 >>> 24;
      bytes[1] = (v4 >>> 16) & 255;
      bytes[2] = (v4 >>> 8) & 255;
      bytes[3] = v4 & 255;
      this.#bytes = bytes;
    }
    return this.#bytes;
  }
}

/** `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255` is 45 characters; the rest is room for a zone id. */
export const MAX_IP_TEXT_LENGTH = 64;

const COLON = 0x3a;
const DOT = 0x2e;
const PERCENT = 0x25;
const ZERO = 0x30;
const NINE = 0x39;

export function parseIp(text: string): IpAddress {
  const result = parse(text);
  if (typeof result === 'string') throw invalidIp(text, result);
  return result;
}

/** Like parseIp, for callers that treat a bad address as missing rather than as an error. */
export function tryParseIp(text: string): IpAddress | undefined {
  const result = parse(text);
  return typeof result === 'string' ? undefined : result;
}

/** Canonical text for 4 or 16 bytes (no IPv4-mapped conversion: the bytes are taken as they are). */
export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return formatV4(bytes, 0);
  if (bytes.length === 16) return formatV6(bytes);
  throw new BanstreamError('SUBJECT_INVALID_IP', `an IP address has 4 or 16 bytes, not ${bytes.length}`);
}

export function invalidIp(text: unknown, reason: string): BanstreamError {
  return new BanstreamError('SUBJECT_INVALID_IP', `not an IP address: ${quote(text)} (${reason})`, {
    details: { input: typeof text === 'string' ? text.slice(0, MAX_IP_TEXT_LENGTH) : typeof text, reason },
  });
}

/** Quotes user input for an error message, cut short so a huge input cannot bloat logs. */
export function quote(text: unknown): string {
  if (typeof text !== 'string') return `<${typeof text}>`;
  return JSON.stringify(text.length > MAX_IP_TEXT_LENGTH ? `${text.slice(0, MAX_IP_TEXT_LENGTH)}…` : text);
}

/** The address, or the reason it is not one (a string, so tryParseIp costs no exception). */
function parse(text: string): IpAddress | string {
  if (typeof text !== 'string' || text.length === 0) return 'empty';
  if (text.length > MAX_IP_TEXT_LENGTH) return `longer than ${MAX_IP_TEXT_LENGTH} characters`;
  // Most addresses are canonical IPv4: one pass, and the general scan only for the rest.
  const v4 = canonicalIpv4(text);
  if (v4 >= 0) return new Ipv4Address(text, v4 | 0);
  let end = text.length;
  let colons = false;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === COLON) colons = true;
    else if (c === PERCENT) end = i;
  }
  // A zone id is letters, digits, '-', '.' and ':' (what node:net and RFC 4007 interfaces allow).
  if (end < text.length && !/^[0-9A-Za-z.:-]*$/.test(text.slice(end + 1))) return 'bad zone id';
  if (!colons) {
    if (end !== text.length) return 'a zone id is only valid on IPv6';
    const bytes = new Uint8Array(4);
    const reason = parseV4(text, 0, end, bytes, 0);
    // Only the canonical form is accepted, so the input is already the canonical text.
    return reason ?? { family: 4, bytes, text };
  }
  if (end === text.length - 1) return 'empty zone id';
  const bytes = new Uint8Array(16);
  const reason = parseV6(text, end, bytes);
  if (reason !== undefined) return reason;
  if (isV4Mapped(bytes)) {
    const v4 = bytes.slice(12);
    return { family: 4, bytes: v4, text: formatV4(v4, 0) };
  }
  return { family: 6, bytes, text: formatV6(bytes) };
}

/** Four decimal octets from `start` to exactly `end`, written at `out[at..at+4]`. */
function parseV4(s: string, start: number, end: number, out: Uint8Array, at: number): string | undefined {
  let i = start;
  for (let octet = 0; octet < 4; octet++) {
    const first = i;
    let value = 0;
    while (i < end) {
      const c = s.charCodeAt(i);
      if (c < ZERO || c > NINE) break;
      value = value * 10 + (c - ZERO);
      if (++i - first > 3) return 'IPv4 octet longer than 3 digits';
    }
    if (i === first) return i < end ? unexpected(s, i) : 'IPv4 needs 4 decimal octets';
    if (value > 255) return 'IPv4 octet above 255';
    if (i - first > 1 && s.charCodeAt(first) === ZERO) return 'leading zero in an IPv4 octet is ambiguous';
    out[at + octet] = value;
    if (octet < 3) {
      if (i === end) return 'IPv4 needs 4 decimal octets';
      if (s.charCodeAt(i) !== DOT) return unexpected(s, i);
      i++;
    }
  }
  return i === end ? undefined : s.charCodeAt(i) === DOT ? 'IPv4 needs exactly 4 octets' : unexpected(s, i);
}

/** RFC 4291 section 2.2 text from 0 to `end` (the zone id, if any, starts at `end`). */
function parseV6(s: string, end: number, out: Uint8Array): string | undefined {
  let groups = 0;
  let gap = -1; // group index where `::` stands
  let i = 0;
  if (s.charCodeAt(0) === COLON) {
    if (s.charCodeAt(1) !== COLON) return 'IPv6 cannot start with a single colon';
    gap = 0;
    i = 2;
  }
  while (i < end) {
    if (groups === 8) return 'IPv6 has more than 8 groups';
    const first = i;
    let value = 0;
    while (i < end) {
      const digit = hexDigit(s.charCodeAt(i));
      if (digit < 0) break;
      value = value * 16 + digit;
      if (++i - first > 4) return 'IPv6 group longer than 4 hex digits';
    }
    if (i < end && s.charCodeAt(i) === DOT) {
      // An embedded IPv4 tail (`::ffff:192.0.2.1`) fills the last two groups.
      if (groups > 6) return 'IPv6 has more than 8 groups';
      const reason = parseV4(s, first, end, out, groups * 2);
      if (reason !== undefined) return reason;
      groups += 2;
      break;
    }
    if (i === first) return i < end ? unexpected(s, i) : 'IPv6 ends with a single colon';
    out[groups * 2] = value >> 8;
    out[groups * 2 + 1] = value & 0xff;
    groups++;
    if (i === end) break;
    if (s.charCodeAt(i) !== COLON) return unexpected(s, i);
    if (++i < end && s.charCodeAt(i) === COLON) {
      if (gap >= 0) return 'IPv6 has more than one "::"';
      gap = groups;
      i++;
    } else if (i === end) return 'IPv6 ends with a single colon';
  }
  if (gap < 0) return groups === 8 ? undefined : 'IPv6 needs 8 groups or "::"';
  if (groups === 8) return 'IPv6 has "::" but already 8 groups';
  // Move the groups after `::` to the end and zero the gap.
  const tail = (groups - gap) * 2;
  const to = 16 - tail;
  out.copyWithin(to, gap * 2, groups * 2);
  out.fill(0, gap * 2, to);
  return undefined;
}

function hexDigit(c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  const lower = c | 0x20; // ASCII letters only differ by this bit
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function isV4Mapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

function formatV4(b: Uint8Array, at: number): string {
  return `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
}

/** RFC 5952: lower-case hex, no leading zeros, the first longest run of 2+ zero groups as `::`. */
function formatV6(b: Uint8Array): string {
  let bestStart = -1;
  let bestLength = 1;
  let runStart = -1;
  for (let g = 0; g < 8; g++) {
    if (b[2 * g] === 0 && b[2 * g + 1] === 0) {
      if (runStart < 0) runStart = g;
      if (g - runStart + 1 > bestLength) {
        bestStart = runStart;
        bestLength = g - runStart + 1;
      }
    } else runStart = -1;
  }
  let text = '';
  for (let g = 0; g < 8; g++) {
    if (g === bestStart) {
      text += '::';
      g += bestLength - 1;
      continue;
    }
    if (text.length > 0 && g !== bestStart + bestLength) text += ':';
    text += ((b[2 * g]! << 8) | b[2 * g + 1]!).toString(16);
  }
  return text;
}

function unexpected(s: string, i: number): string {
  return `unexpected ${JSON.stringify(s[i])} at position ${i}`;
}

/**
 * The 32-bit value of a canonical dotted-quad IPv4 address written in ASCII at
 * bytes[from, to), or -1 for anything else (IPv6, a leading zero, a fifth octet...):
 * what `tryParseIp` gives for text that is already its own canonical form, for a
 * caller holding bytes (the gateway's Avro scan) that would otherwise make a string.
 */
export function canonicalIpv4At(bytes: Uint8Array, from: number, to: number): number {
  // One pass, one test per character: digits build the octet, a dot closes it.
  let address = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = from; i < to; i++) {
    const d = bytes[i]! - ZERO;
    if (d >= 0 && d <= 9) {
      if (digits === 1 && octet === 0) return -1; // a leading zero
      octet = octet * 10 + d;
      if (octet > 255) return -1;
      digits++;
    } else if (d === DOT - ZERO && digits !== 0 && dots !== 3) {
      address = address * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else return -1;
  }
  return digits === 0 || dots !== 3 ? -1 : address * 256 + octet;
}

/** canonicalIpv4At for a string: the value of a canonical dotted quad, or -1. */
export function canonicalIpv4(text: string): number {
  let address = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const d = text.charCodeAt(i) - ZERO;
    if (d >= 0 && d <= 9) {
      if (digits === 1 && octet === 0) return -1; // a leading zero
      octet = octet * 10 + d;
      if (octet > 255) return -1;
      digits++;
    } else if (d === DOT - ZERO && digits !== 0 && dots !== 3) {
      address = address * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else return -1;
  }
  return digits === 0 || dots !== 3 ? -1 : address * 256 + octet;
}

/** Canonical text of a 32-bit IPv4 value. */
export function formatIpv4(address: number): string {
  return `${address >>> 24}.${(address >>> 16) & 255}.${(address >>> 8) & 255}.${address & 255}`;
}
