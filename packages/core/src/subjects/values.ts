import * as crypto from 'node:crypto';

/**
 * Subject values are attacker-chosen (a User-Agent, a path, a Host header), and
 * every distinct subject costs window state in the aggregator and cache entries in
 * the enforcer. So a value is made safe and bounded before it becomes a subject:
 *
 * - an empty value counts as missing: `header.x-tenant:` would lump every request
 *   without the header into one subject;
 * - `|` (the composite separator), `%` (the escape itself) and control characters
 *   (C0, DEL, C1) are percent-encoded as `%XX`, the UTF-16 code unit in hex, so
 *   `a|b` cannot forge a second part and the encoding stays reversible;
 * - a value longer than MAX_SUBJECT_VALUE_BYTES once encoded becomes
 *   `h:` + base64url(first 16 bytes of SHA-256(value)): 24 characters whatever its
 *   size, so memory per subject is bounded; 128 bits keep collisions out of reach;
 * - a value that itself starts with `h:` has that colon encoded (`h%3A…`), so no
 *   plain value can pass for the digest of another.
 */
export const MAX_SUBJECT_VALUE_BYTES = 128;

/** Marks a hashed value; 22 base64url characters follow. */
export const HASHED_VALUE_PREFIX = 'h:';
const HASHED_VALUE_LENGTH = HASHED_VALUE_PREFIX.length + 22;

/** API-key subjects keep this many hex characters of the SHA-256 (128 bits). */
export const API_KEY_SUBJECT_HEX_CHARS = 32;

/** The bounded, unambiguous subject value, or undefined when the value is missing or empty. */
export function boundValue(raw: string | null | undefined, maxBytes: number = MAX_SUBJECT_VALUE_BYTES): string | undefined {
  if (raw === undefined || raw === null || raw.length === 0) return undefined;
  // Every UTF-16 unit is at least one UTF-8 byte: too long already.
  if (raw.length > maxBytes) return hashValue(raw);
  let plain = !(raw.charCodeAt(0) === 0x68 && raw.charCodeAt(1) === 0x3a); // `h:`
  let ascii = true;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (needsEscape(c)) plain = false;
    else if (c > 0x7f) ascii = false;
  }
  // A lone surrogate cannot cross UTF-8 (the events topic): the edge writes U+FFFD in its
  // place (wellFormedEvent), so the enforcer's subject must say U+FFFD too, or the ban the
  // aggregator places is never the one looked up.
  if (!ascii && !raw.isWellFormed()) raw = raw.toWellFormed();
  const value = plain ? raw : escapeValue(raw);
  const bytes = ascii ? value.length : Buffer.byteLength(value, 'utf8');
  return bytes <= maxBytes ? value : hashValue(raw);
}

/** `h:` + base64url of the first 16 bytes of SHA-256 of the UTF-8 value. */
export function hashValue(raw: string): string {
  // The first 21 characters of the whole digest's base64url encode bits 0–125; the
  // 22nd of a 16-byte encoding holds bits 126–127 and four zero bits.
  const digest = sha256(raw, 'base64url');
  return HASHED_VALUE_PREFIX + digest.slice(0, 21) + BASE64URL[BASE64URL.indexOf(digest[21]!) & 0x30];
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * One-shot crypto.hash (Node ≥ 20.12) skips the Hash object and is 2–3 times faster,
 * which matters at one or two hashes per request in the enforcer.
 */
const sha256: (data: string, encoding: 'hex' | 'base64url') => string =
  typeof crypto.hash === 'function' ? (data, encoding) => crypto.hash('sha256', data, encoding) : (data, encoding) => crypto.createHash('sha256').update(data, 'utf8').digest(encoding);

/** Is this subject value a digest made by hashValue (not a plain value)? */
export function isHashedValue(value: string): boolean {
  if (value.length !== HASHED_VALUE_LENGTH || !value.startsWith(HASHED_VALUE_PREFIX)) return false;
  for (let i = HASHED_VALUE_PREFIX.length; i < value.length; i++) {
    const c = value.charCodeAt(i);
    const ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2d || c === 0x5f;
    if (!ok) return false;
  }
  return true;
}

/** Percent-encodes what would make a subject ambiguous, and the colon of a leading `h:`. */
export function escapeValue(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    out += needsEscape(c) || (i === 1 && c === 0x3a && raw.charCodeAt(0) === 0x68) ? `%${hex2(c)}` : raw[i];
  }
  return out;
}

/**
 * Inverse of escapeValue; undefined when a `%` is not followed by two hex digits or
 * encodes a character escapeValue leaves alone (`%41`, or UTF-8 bytes such as `%C3`,
 * which would silently decode to the wrong text).
 */
export function unescapeValue(value: string): string | undefined {
  if (!value.includes('%')) return value;
  let out = '';
  for (let i = 0; i < value.length; i++) {
    if (value.charCodeAt(i) !== 0x25) {
      out += value[i];
      continue;
    }
    const high = hexDigit(value.charCodeAt(i + 1));
    const low = hexDigit(value.charCodeAt(i + 2));
    const code = high * 16 + low;
    if (high < 0 || low < 0 || !(needsEscape(code) || code === 0x3a)) return undefined;
    out += String.fromCharCode(code);
    i += 2;
  }
  return out;
}

/**
 * Hex SHA-256 of a clear API key, exactly as the edge computes RequestEvent.apiKeyHash,
 * so the enforcer (which sees the clear key) and the aggregator (which sees only the
 * hash) derive the same `apikey:` subject. The clear key is never kept.
 */
export function hashApiKey(clearKey: string): string {
  return sha256(clearKey, 'hex');
}

/** Lower-case 64 hex digits, or undefined when it is not a hex SHA-256. */
export function normaliseApiKeyHash(hash: string): string | undefined {
  if (hash.length !== 64) return undefined;
  const lower = hash.toLowerCase();
  for (let i = 0; i < 64; i++) {
    const c = lower.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return undefined;
  }
  return lower;
}

function needsEscape(c: number): boolean {
  return c < 0x20 || c === 0x7c || c === 0x25 || (c >= 0x7f && c <= 0x9f);
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function hex2(c: number): string {
  return (c < 0x10 ? '0' : '') + c.toString(16).toUpperCase();
}
