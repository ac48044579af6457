import { BanstreamError } from '../errors.js';
import { parseCidr } from './cidr.js';
import { compareDimensions, parseDimension, type KeyDimension } from './dimensions.js';
import { parseIp, quote } from './ip.js';
import { isValidAsn, isValidStatus, normaliseHost, normaliseMethod, normalisePath } from './normalise.js';
import { SUBJECT_SEPARATOR } from './subject.js';
import { API_KEY_SUBJECT_HEX_CHARS, boundValue, hashValue, isHashedValue, normaliseApiKeyHash, unescapeValue } from './values.js';

/**
 * Subjects as text, for the enforcer's and the admin API's side: read a subject
 * back into parts, or write one from parts an operator typed. The format is the
 * one compileKey produces, and formatSubject(parseSubject(s)) === s for every
 * subject it produces; other input is normalised (`ip:2001:DB8::1` →
 * `ip:2001:db8::1`, parts sorted) or refused with SUBJECT_INVALID.
 */
export interface SubjectPart {
  /** `ip`, `cidr`, `user`, `header.user-agent`, `cookie.session`, … */
  readonly scope: string;
  /** The plain value (unescaped, normalised), or the `h:` digest when hashed. */
  readonly value: string;
  /** The value is the digest of a long (or cookie) value; the original is gone. */
  readonly hashed: boolean;
}

/** Longest subject text parseSubject reads: far above any it produces. */
export const MAX_SUBJECT_TEXT_LENGTH = 4096;

/** A UTF-16 surrogate without its pair (`u` mode reads a pair as one code point). */
const LONE_SURROGATE = /\p{Cs}/u;

/** Kinds whose values are free text (so may be hashed); the others have a closed form. */
const FREE_TEXT = new Set(['user', 'header', 'cookie', 'method', 'host', 'path', 'route', 'country', 'region']);

export function parseSubject(text: string): SubjectPart[] {
  if (typeof text !== 'string' || text.length === 0) throw invalidSubject(text, 'empty');
  if (text.length > MAX_SUBJECT_TEXT_LENGTH) throw invalidSubject(text, `longer than ${MAX_SUBJECT_TEXT_LENGTH} characters`);
  // Kafka holds keys and values as UTF-8, where a lone surrogate becomes U+FFFD: another subject than the one answered.
  const lone = LONE_SURROGATE.exec(text);
  if (lone) throw invalidSubject(text, `a lone surrogate (\\u${lone[0].charCodeAt(0).toString(16)}) at ${lone.index}: not Unicode text`);
  const parts = text.split(SUBJECT_SEPARATOR).map((part) => {
    const colon = part.indexOf(':');
    if (colon <= 0) throw invalidSubject(text, `${quote(part)} is not scope:value`);
    const scope = part.slice(0, colon);
    const raw = part.slice(colon + 1);
    const dimension = dimensionOfScope(scope, text);
    if (isHashedValue(raw)) {
      if (!FREE_TEXT.has(dimension.kind)) throw invalidSubject(text, `${scope} values are never hashed`);
      return { scope, value: raw, hashed: true };
    }
    const decoded = unescapeValue(raw);
    if (decoded === undefined) throw invalidSubject(text, `bad %-escape in ${quote(raw)}`);
    const value = normaliseValue(dimension, decoded, text);
    if (value.length === 0) throw invalidSubject(text, `empty value for ${scope}`);
    return { scope, value, hashed: false };
  });
  return sortParts(parts, text);
}

/** The subject text of parts, in canonical order; values are normalised, escaped and bounded. */
export function formatSubject(parts: readonly SubjectPart[]): string {
  const input = parts.map((p) => `${p.scope}:${p.value}`).join(SUBJECT_SEPARATOR);
  if (parts.length === 0) throw invalidSubject(input, 'no parts');
  const encoded = sortParts(parts, input).map((part) => {
    const dimension = dimensionOfScope(part.scope, input);
    if (part.hashed) {
      if (!FREE_TEXT.has(dimension.kind) || !isHashedValue(part.value)) throw invalidSubject(input, `${quote(part.value)} is not a hashed value`);
      return `${part.scope}:${part.value}`;
    }
    const value = normaliseValue(dimension, part.value, input);
    const bounded = dimension.kind === 'cookie' ? hashValue(value) : FREE_TEXT.has(dimension.kind) ? boundValue(value) : value;
    if (bounded === undefined || bounded.length === 0) throw invalidSubject(input, `empty value for ${part.scope}`);
    return `${part.scope}:${bounded}`;
  });
  return encoded.join(SUBJECT_SEPARATOR);
}

/** The canonical text of a subject an operator typed (a manual ban, an allowlist entry). */
export function normaliseSubject(text: string): string {
  return formatSubject(parseSubject(text));
}

/** `ip:203.0.113.7` → `ip`; a composite gives its scopes: `ip|path`. Not validated: cheap. */
export function subjectScope(subject: string): string {
  let scopes = '';
  let start = 0;
  while (start <= subject.length) {
    let end = subject.indexOf(SUBJECT_SEPARATOR, start);
    if (end < 0) end = subject.length;
    const colon = subject.indexOf(':', start);
    if (colon < 0 || colon > end) throw invalidSubject(subject, 'a part is not scope:value');
    scopes += (start === 0 ? '' : SUBJECT_SEPARATOR) + subject.slice(start, colon);
    start = end + 1;
  }
  return scopes;
}

function dimensionOfScope(scope: string, input: string): KeyDimension {
  if (scope === 'cidr') return { kind: 'prefix' };
  if (scope === 'prefix') throw invalidSubject(input, 'the scope of a network is cidr, not prefix');
  const dot = scope.indexOf('.');
  const dimensionText = dot > 0 && (scope.startsWith('header.') || scope.startsWith('cookie.')) ? `${scope.slice(0, dot)}:${scope.slice(dot + 1)}` : scope;
  let dimension: KeyDimension;
  try {
    dimension = parseDimension(dimensionText);
  } catch (err) {
    const reason = (err as BanstreamError).details?.['reason'];
    throw invalidSubject(input, `unknown scope ${quote(scope)}${typeof reason === 'string' ? `: ${reason}` : ''}`, err);
  }
  if ((dimension.kind === 'header' || dimension.kind === 'cookie') && `${dimension.kind}.${dimension.name}` !== scope) {
    throw invalidSubject(input, `header scopes are lower case: ${dimension.kind}.${dimension.name}`);
  }
  return dimension;
}

/** The same normalisation the attribute constructors apply, so typed subjects match computed ones. */
function normaliseValue(d: KeyDimension, value: string, input: string): string {
  try {
    switch (d.kind) {
      case 'ip':
        return parseIp(value).text;
      case 'prefix':
        return parseCidr(value).text;
      case 'apikey': {
        // The full hex SHA-256 (RequestEvent.apiKeyHash) is accepted and shortened.
        const full = value.length === 64 ? normaliseApiKeyHash(value) : undefined;
        const short = full ? full.slice(0, API_KEY_SUBJECT_HEX_CHARS) : value.toLowerCase();
        if (!/^[0-9a-f]{32}$/.test(short)) throw new Error(`apikey values are ${API_KEY_SUBJECT_HEX_CHARS} or 64 hex digits`);
        return short;
      }
      case 'method':
        return normaliseMethod(value);
      case 'host':
        return normaliseHost(value);
      case 'path':
        return normalisePath(value);
      case 'country':
      case 'region':
        return value.toUpperCase();
      case 'status':
        if (!/^[1-9][0-9]{2}$/.test(value) || !isValidStatus(Number(value))) throw new Error('status values are 100 to 999');
        return value;
      case 'status_class':
        if (!/^[1-9]xx$/i.test(value)) throw new Error('status_class values look like 4xx');
        return value.toLowerCase();
      case 'asn':
        if (!/^(0|[1-9][0-9]{0,9})$/.test(value) || !isValidAsn(Number(value))) throw new Error('asn values are 0 to 4294967295');
        return value;
      default:
        return value;
    }
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw invalidSubject(input, reason, err);
  }
}

function sortParts<P extends SubjectPart>(parts: readonly P[], input: string): P[] {
  const keyed = parts.map((part) => ({ part, dimension: dimensionOfScope(part.scope, input) }));
  keyed.sort((a, b) => compareDimensions(a.dimension, b.dimension));
  for (let i = 1; i < keyed.length; i++) {
    if (keyed[i]!.part.scope === keyed[i - 1]!.part.scope) throw invalidSubject(input, `scope ${keyed[i]!.part.scope} appears twice`);
  }
  return keyed.map((k) => k.part);
}

function invalidSubject(text: unknown, reason: string, cause?: unknown): BanstreamError {
  return new BanstreamError('SUBJECT_INVALID', `not a subject: ${quote(text)} (${reason})`, { cause, details: { reason } });
}
