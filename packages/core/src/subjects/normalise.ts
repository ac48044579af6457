/**
 * Field normalisers shared by both attribute constructors and by parseSubject, so a
 * value typed by an admin, sent by an edge or seen by an enforcer ends up as the
 * same text. Each is idempotent: normalising twice changes nothing.
 */

/** Header maps as Node gives them (`IncomingHttpHeaders`) or as an event carries them. */
export type HeadersInput = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Methods are case-sensitive by RFC 9110 but every server treats `post` as POST; so do we. */
export function normaliseMethod(method: string): string {
  return upperCase(method);
}

/**
 * Lower case, without port and trailing dots: `Example.COM.:8443` → `example.com`.
 * A bracketed IPv6 literal keeps its brackets; text with several colons and no
 * brackets is not a host:port and only gets lower-cased.
 */
export function normaliseHost(host: string): string {
  // A service answers for one host or a few: the last plain one found is compared whole.
  if (host === lastPlainHost || isPlainHost(host)) return (lastPlainHost = host);
  let h = stripTrailingDots(lowerCase(host));
  const colon = h.lastIndexOf(':');
  if (colon >= 0 && allDigits(h, colon + 1)) {
    const bracketed = h.charCodeAt(0) === 0x5b && h.charCodeAt(colon - 1) === 0x5d;
    if (bracketed || h.indexOf(':') === colon) h = stripTrailingDots(h.slice(0, colon));
  }
  return h;
}

/**
 * The path without query string or fragment (queries carry secrets and unbounded
 * values), in the one normal form of every spelling a server serves alike: path.ts.
 */
export { normalisePath } from './path.js';

/** ISO 3166 codes in upper case; empty counts as unknown. */
export function normaliseGeo(code: string | null | undefined): string | undefined {
  return code === undefined || code === null || code.length === 0 ? undefined : upperCase(code);
}

/**
 * A response status, or undefined when there is none: 0 is the schema's "client went
 * away", and the enforcer asks before any response exists.
 */
export function normaliseStatus(status: number | null | undefined): number | undefined {
  return status === undefined || status === null || status === 0 ? undefined : status;
}

export function isValidStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 100 && status <= 999;
}

/** Autonomous system numbers are unsigned 32-bit. */
export function isValidAsn(asn: number): boolean {
  return Number.isInteger(asn) && asn >= 0 && asn <= 0xffffffff;
}

const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx', '6xx', '7xx', '8xx', '9xx'] as const;

/** `401` → `4xx`. */
export function statusClass(status: number | undefined): string | undefined {
  return status === undefined || !isValidStatus(status) ? undefined : STATUS_CLASSES[Math.floor(status / 100)];
}

/**
 * Lower-case names in a prototype-less object (a header named `constructor` must not
 * find Object.prototype's), repeated headers joined as RFC 9110 says: `, ` in
 * general, `; ` for Cookie. Edges that publish events should build their map with
 * this too, so both sides see the same joined value.
 */
export function normaliseHeaders(headers: HeadersInput | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (!headers) return out;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = lowerCase(name);
    const joined = typeof value === 'string' ? value : value.join(lower === 'cookie' ? '; ' : ', ');
    const previous = out[lower];
    // Two spellings of one name (`X-A` and `x-a`) in a plain map: keep both values.
    out[lower] = previous === undefined ? joined : `${previous}${lower === 'cookie' ? '; ' : ', '}${joined}`;
  }
  return out;
}

/**
 * `a=1; b=2` → { a: '1', b: '2' } (RFC 6265 section 5.4 without its path ordering).
 * Names keep their case; the first of two same-named cookies wins, as most servers
 * read it; pairs without `=` or with an empty name are skipped. Prototype-less.
 */
export function parseCookies(header: string | undefined): Record<string, string> | undefined {
  if (header === undefined || header.length === 0) return undefined;
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  let start = 0;
  while (start <= header.length) {
    let end = header.indexOf(';', start);
    if (end < 0) end = header.length;
    const eq = header.indexOf('=', start);
    if (eq >= 0 && eq < end) {
      const name = header.slice(start, eq).trim();
      if (name.length > 0 && out[name] === undefined) out[name] = header.slice(eq + 1, end).trim();
    }
    start = end + 1;
  }
  return out;
}

/** Own property only: safe on plain objects built by callers, too. */
export function ownValue(map: Readonly<Record<string, string>> | undefined, name: string): string | undefined {
  if (map === undefined || !Object.hasOwn(map, name)) return undefined;
  const value = map[name];
  return typeof value === 'string' ? value : undefined;
}

// The case mappings below return their input when it is already in the wanted case,
// which is nearly always: toUpperCase and toLowerCase copy it (about 20 ns a call).

/** toUpperCase, without a copy for text that has no lower-case letter and no non-ASCII one. */
function upperCase(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0x61 && c <= 0x7a) || c > 0x7f) return s.toUpperCase();
  }
  return s;
}

/** toLowerCase, without a copy for text that has no upper-case letter and no non-ASCII one. */
function lowerCase(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0x41 && c <= 0x5a) || c > 0x7f) return s.toLowerCase();
  }
  return s;
}

let lastPlainHost = '';

/** Already its own normal form: lower-case letters, digits, `-` and `.`, not ending in a dot (so no port either). */
function isPlainHost(host: string): boolean {
  for (let i = 0; i < host.length; i++) {
    const c = host.charCodeAt(i);
    if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e)) return false;
  }
  return host.length === 0 || host.charCodeAt(host.length - 1) !== 0x2e;
}

function stripTrailingDots(h: string): string {
  let end = h.length;
  while (end > 0 && h.charCodeAt(end - 1) === 0x2e) end--;
  return end === h.length ? h : h.slice(0, end);
}

function allDigits(s: string, from: number): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}
