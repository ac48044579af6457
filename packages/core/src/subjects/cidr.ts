import { BanstreamError } from '../errors.js';
import { formatIp, parseIp, quote, type IpAddress } from './ip.js';

/** A network: the address with every host bit cleared, and its prefix length. */
export interface Cidr {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
  readonly bits: number;
  /** Canonical `203.0.113.0/24`, `2001:db8:1::/48`: always with the `/bits`. */
  readonly text: string;
}

/**
 * Prefix lengths of the events topic key (DESIGN.md): every address of one /24 or
 * /48 lands in one partition, so `ip` and `cidr` subjects stay partition-local as
 * long as the prefix dimension is no longer than this.
 */
export const EVENT_KEY_PREFIX_BITS = { v4: 24, v6: 48 } as const;

/** `networkPrefix('203.0.113.7', 24)` → `203.0.113.0/24`. Per request: no allocation but the text. */
export function networkPrefix(ip: IpAddress | string, bits: number): string {
  const address = typeof ip === 'string' ? parseIp(ip) : ip;
  checkBits(address.family, bits, address);
  const scratch = address.family === 4 ? scratch4 : scratch16;
  maskInto(address.bytes, bits, scratch);
  return `${formatIp(scratch)}/${bits}`;
}

// Safe to share: filled and read within one synchronous call.
const scratch4 = new Uint8Array(4);
const scratch16 = new Uint8Array(16);

export function networkOf(ip: IpAddress | string, bits: number): Cidr {
  const address = typeof ip === 'string' ? parseIp(ip) : ip;
  checkBits(address.family, bits, address);
  const bytes = mask(address.bytes, bits);
  return { family: address.family, bytes, bits, text: `${formatIp(bytes)}/${bits}` };
}

/** The events topic key for a client address: its /24 (IPv4) or /48 (IPv6) prefix. */
export function eventPartitionKey(ip: IpAddress | string): string {
  const address = typeof ip === 'string' ? parseIp(ip) : ip;
  // Once per published event: an IPv4 /24 is its canonical text with the last octet zeroed.
  if (address.family === 4) return `${address.text.slice(0, address.text.lastIndexOf('.'))}.0/24`;
  return networkPrefix(address, EVENT_KEY_PREFIX_BITS.v6);
}

/** eventPartitionKey of the IPv4 address with this 32-bit value. */
export function ipv4EventPartitionKey(address: number): string {
  return `${address >>> 24}.${(address >>> 16) & 255}.${(address >>> 8) & 255}.0/24`;
}

/**
 * Parses `10.1.2.3/8` into `10.0.0.0/8`: host bits are cleared rather than refused,
 * because people write a network by one of its addresses. A bare address is its host
 * network (/32 or /128). `::ffff:192.0.2.0/120` is the IPv4 network `192.0.2.0/24`,
 * since addresses in that range are parsed as IPv4 too.
 */
export function parseCidr(text: string): Cidr {
  if (typeof text !== 'string' || text.length === 0) throw invalidCidr(text, 'empty');
  const slash = text.indexOf('/');
  const addressText = slash < 0 ? text : text.slice(0, slash);
  if (addressText.includes('%')) throw invalidCidr(text, 'a zone id has no place in a network');
  let address: IpAddress;
  try {
    address = parseIp(addressText);
  } catch (err) {
    throw invalidCidr(text, (err as BanstreamError).details.reason as string, err);
  }
  const v6Text = addressText.includes(':');
  let bits = slash < 0 ? (v6Text ? 128 : 32) : parseBits(text, slash + 1);
  if (v6Text && address.family === 4) {
    // IPv4-mapped: the first 96 bits are the ::ffff: marker.
    checkBits(6, bits, text);
    if (bits < 96) throw invalidCidr(text, 'an IPv4-mapped network needs a prefix of at least 96 bits');
    bits -= 96;
  }
  checkBits(address.family, bits, text);
  const bytes = mask(address.bytes, bits);
  return { family: address.family, bytes, bits, text: `${formatIp(bytes)}/${bits}` };
}

export function tryParseCidr(text: string): Cidr | undefined {
  try {
    return parseCidr(text);
  } catch {
    return undefined;
  }
}

/** Does the network hold the address? Different families never match. */
export function cidrContains(cidr: Cidr | string, ip: IpAddress | string): boolean {
  const network = typeof cidr === 'string' ? parseCidr(cidr) : cidr;
  const address = typeof ip === 'string' ? parseIp(ip) : ip;
  if (network.family !== address.family) return false;
  const whole = network.bits >>> 3;
  for (let i = 0; i < whole; i++) if (network.bytes[i] !== address.bytes[i]) return false;
  const rest = network.bits & 7;
  if (rest === 0) return true;
  const keep = (0xff << (8 - rest)) & 0xff;
  return ((network.bytes[whole]! ^ address.bytes[whole]!) & keep) === 0;
}

function mask(bytes: Uint8Array, bits: number): Uint8Array {
  return maskInto(bytes, bits, new Uint8Array(bytes.length));
}

function maskInto(bytes: Uint8Array, bits: number, out: Uint8Array): Uint8Array {
  const whole = bits >>> 3;
  for (let i = 0; i < out.length; i++) out[i] = i < whole ? bytes[i]! : 0;
  const rest = bits & 7;
  if (rest > 0) out[whole] = bytes[whole]! & ((0xff << (8 - rest)) & 0xff);
  return out;
}

/** Decimal 0–128 without leading zeros, to the end of the text. */
function parseBits(text: string, from: number): number {
  const digits = text.length - from;
  if (digits === 0) throw invalidCidr(text, 'missing prefix length after "/"');
  if (digits > 3) throw invalidCidr(text, 'prefix length too long');
  let bits = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) throw invalidCidr(text, 'prefix length must be a decimal number');
    bits = bits * 10 + (c - 0x30);
  }
  if (digits > 1 && text.charCodeAt(from) === 0x30) throw invalidCidr(text, 'leading zero in prefix length');
  return bits;
}

/** Throws for a prefix length out of range; `input` (or the address text) names the culprit. */
function checkBits(family: 4 | 6, bits: number, input: string | IpAddress): void {
  const max = family === 4 ? 32 : 128;
  if (!Number.isInteger(bits) || bits < 0 || bits > max) {
    const text = typeof input === 'string' ? input : `${input.text}/${bits}`;
    throw invalidCidr(text, `an IPv${family} prefix length is an integer from 0 to ${max}, not ${bits}`);
  }
}

function invalidCidr(text: unknown, reason: string, cause?: unknown): BanstreamError {
  return new BanstreamError('SUBJECT_INVALID_CIDR', `not a network: ${quote(text)} (${reason})`, {
    cause,
    details: { input: typeof text === 'string' ? text.slice(0, 80) : text, reason },
  });
}
