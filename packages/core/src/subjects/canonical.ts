import { parseCidr, tryParseCidr, type Cidr } from './cidr.js';
import { tryParseIp } from './ip.js';
import { addressSubject, SUBJECT_SEPARATOR } from './subject.js';
import { normaliseSubject, subjectScope } from './subject-text.js';

/**
 * A subject as an operator types it (a manual ban, an allowlist entry, a lookup) → the
 * text compileKey gives the same subject, which is what the enforcer looks up: a bare
 * address is `ip:…`, a bare network `cidr:…` (a /32 or /128 is its address), anything
 * else is `scope:value` parts read and written back by normaliseSubject (`user:42`,
 * `apikey:<32 or 64 hex>`, composites in canonical order, whichever part comes first).
 * Throws a BanstreamError (SUBJECT_INVALID, SUBJECT_INVALID_IP, SUBJECT_INVALID_CIDR).
 */
export function canonicalSubject(text: string): string {
  if (typeof text !== 'string') return normaliseSubject(text); // refused there, naming the input
  const bare = text.trim();
  const ip = tryParseIp(bare);
  if (ip) return addressSubject(ip);
  const network = tryParseCidr(bare);
  if (network) return networkSubject(network);
  const subject = normaliseSubject(bare);
  if (subject.startsWith('cidr:') && !subject.includes(SUBJECT_SEPARATOR)) return networkSubject(parseCidr(subject.slice('cidr:'.length)));
  return subject;
}

/** `cidr:…`, or the `ip:` subject of the one address a /32 or /128 holds. */
export function networkSubject(network: Cidr): string {
  const whole = network.bits === (network.family === 4 ? 32 : 128);
  return whole ? `ip:${network.text.slice(0, network.text.indexOf('/'))}` : `cidr:${network.text}`;
}

/** Scopes only a response carries: no request being checked has them. */
const RESPONSE_SCOPES = new Set(['status', 'status_class']);

/**
 * The first scope of a canonical subject that only a response carries, if any: a
 * ban on it would be listed and never applied, as the enforcer checks a request
 * before its response exists.
 */
export function responseOnlyScope(subject: string): string | undefined {
  return subjectScope(subject)
    .split(SUBJECT_SEPARATOR)
    .find((scope) => RESPONSE_SCOPES.has(scope));
}
