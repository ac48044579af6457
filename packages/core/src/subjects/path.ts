/**
 * The path a policy glob, a `path:` subject and a count see: one normal form for every
 * spelling that the protected service serves as the same resource. Clients choose the
 * spelling: `/%61dmin` is served by Fastify's `/admin` route and by nginx's
 * `location /admin`, so a ban on `path:/admin` must see `/admin` in it.
 *
 * The normal form (RFC 3986 section 6.2.2, widened where routers are):
 * - an absolute-form target (`http://host/admin`, which Node and nginx serve as
 *   `/admin`) loses its scheme and authority; a target without a leading `/` gets one;
 * - the query and fragment are cut at the first raw `?` or `#`;
 * - a %-escape of printable ASCII is decoded, except for the delimiters
 *   `/ ? # % ; : @ & = + $ ,`: RFC 3986's unreserved characters, and also what
 *   Fastify's router decodes (it uses decodeURI: `/a%21b` reaches the `/a!b` route);
 *   other escapes keep their bytes with upper-case hex (`%2f` → `%2F`: `%2F` is no
 *   separator, as for Fastify, Envoy by default and WHATWG URLs);
 * - a `%` that starts no escape (`%zz`: Fastify and nginx answer 400) is written
 *   `%25`, so no decoding can make an escape of it;
 * - runs of `/` are merged: nginx (merge_slashes, on by default), Envoy with
 *   merge_slashes and Fastify with ignoreDuplicateSlashes serve `//admin` as `/admin`;
 *   where `//` stays distinct (Fastify by default) `//admin` is not served by `/admin`,
 *   so counting it with `/admin` costs nothing. Merged before dot segments, as nginx;
 * - dot segments are removed (RFC 3986 section 5.2.4), `%2e` included.
 * Raw characters a request target cannot hold are kept as they are: Node and nginx
 * refuse controls and spaces, and raw non-ASCII reaches banstream as latin1 bytes in a
 * header (nginx passes them on) or as UTF-8 text in an event, so no one encoding of it
 * would be right for both; browsers send it %-encoded.
 *
 * Normalising twice changes nothing. A path already in normal form, nearly every path,
 * costs one scan and no allocation; any other one pass more: linear in its length.
 */

const SLASH = 0x2f;
const DOT = 0x2e;
const PERCENT = 0x25;
const QUERY = 0x3f;
const FRAGMENT = 0x23;

/** 1 for the characters whose escape is decoded: printable ASCII but the delimiters. */
const DECODED = new Uint8Array(256);
for (let c = 0x21; c <= 0x7e; c++) DECODED[c] = 1;
for (const ch of '/?#%;:@&=+$,') DECODED[ch.charCodeAt(0)] = 0;

/**
 * What a path in normal form may hold but rarely does (a `%`, a `/.`) and what none
 * holds: a path starting with `/` without any of them is in normal form, and is
 * returned after one scan. Past a dozen characters a regular expression (native code,
 * no allocation) scans faster than a loop of charCodeAt (35 against 50 ns for 25
 * characters here); below, the loop is faster than the call.
 */
const MAYBE_TO_NORMALISE = /[%?#]|\/[/.]/;
const SHORT_PATH = 16;

export function normalisePath(path: string): string {
  if (path.charCodeAt(0) === SLASH && (path.length < SHORT_PATH ? plainShortPath(path) : !MAYBE_TO_NORMALISE.test(path))) return path;
  const end = normalEnd(path);
  if (end === path.length) return path;
  return end >= 0 ? path.slice(0, end) : normaliseSlowly(path);
}

/** MAYBE_TO_NORMALISE.test as a loop, for a path starting with `/`: false when one of its characters may need normalising. */
function plainShortPath(path: string): boolean {
  let previous = SLASH;
  for (let i = 1; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === PERCENT || c === QUERY || c === FRAGMENT || (previous === SLASH && (c === SLASH || c === DOT))) return false;
    previous = c;
  }
  return true;
}

/**
 * Whether normalisePath would return these bytes (read as latin1) unchanged: the Avro
 * scan's test, made off the bytes without a string. Agrees with normalisePath on every
 * byte string (path.test.ts).
 */
export function isNormalPathBytes(b: Uint8Array, from: number, to: number): boolean {
  if (from === to) return true;
  if (b[from] !== SLASH) return false;
  for (let i = from; i < to; i++) {
    const c = b[i]!;
    if (c === SLASH) {
      if (i + 1 < to && (b[i + 1] === SLASH || (b[i + 1] === DOT && dotSegmentBytes(b, i + 1, to)))) return false;
    } else if (c === PERCENT) {
      if (i + 2 >= to || !keptEscape(b[i + 1]!, b[i + 2]!)) return false;
      i += 2;
    } else if (c === QUERY || c === FRAGMENT) return false;
  }
  return true;
}

/**
 * Where the path in `path` ends (its length, or its first `?` or `#`) when everything
 * before is in normal form; -1 when it needs the slow pass.
 */
function normalEnd(path: string): number {
  const n = path.length;
  if (n === 0) return 0;
  const first = path.charCodeAt(0);
  if (first !== SLASH) return first === QUERY || first === FRAGMENT ? 0 : -1;
  for (let i = 0; i < n; i++) {
    const c = path.charCodeAt(i);
    if (c === SLASH) {
      if (i + 1 < n) {
        const next = path.charCodeAt(i + 1);
        if (next === SLASH || (next === DOT && dotSegment(path, i + 1))) return -1;
      }
    } else if (c === PERCENT) {
      if (i + 2 >= n || !keptEscape(path.charCodeAt(i + 1), path.charCodeAt(i + 2))) return -1;
      i += 2;
    } else if (c === QUERY || c === FRAGMENT) return i;
  }
  return n;
}

/** Is `%` followed by `high` and `low` an escape the normal form keeps as written (not decoded, upper-case hex)? */
function keptEscape(high: number, low: number): boolean {
  const h = hexValue(high);
  const l = hexValue(low);
  return h >= 0 && l >= 0 && DECODED[h * 16 + l] === 0 && high <= 0x46 && low <= 0x46; // 0-9 and A-F are all <= 'F'
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/** `.` or `..` starting at `at`, ending the segment (a `/`, `?`, `#` or the end). */
function dotSegment(path: string, at: number): boolean {
  let i = at + 1;
  if (i < path.length && path.charCodeAt(i) === DOT) i++;
  if (i === path.length) return true;
  const c = path.charCodeAt(i);
  return c === SLASH || c === QUERY || c === FRAGMENT;
}

function dotSegmentBytes(b: Uint8Array, at: number, to: number): boolean {
  let i = at + 1;
  if (i < to && b[i] === DOT) i++;
  if (i === to) return true;
  const c = b[i]!;
  return c === SLASH || c === QUERY || c === FRAGMENT;
}

/** The slow pass: segment by segment, each written in normal form, then merged or resolved (RFC 3986 5.2.4). */
function normaliseSlowly(path: string): string {
  let end = 0;
  while (end < path.length && path.charCodeAt(end) !== QUERY && path.charCodeAt(end) !== FRAGMENT) end++;
  if (end === 0) return '';
  let start = afterAuthority(path, end);
  if (start < 0) start = 0;
  else if (start === end) return '/';
  if (path.charCodeAt(start) === SLASH) start++;
  const out: string[] = [];
  for (let from = start; ; ) {
    let to = from;
    while (to < end && path.charCodeAt(to) !== SLASH) to++;
    const last = to === end;
    const segment = normalSegment(path, from, to);
    if (segment === '.' || segment === '..') {
      if (segment === '..') out.pop();
      if (last) out.push('');
    } else if (segment.length > 0 || last) out.push(segment);
    if (last) break;
    from = to + 1;
  }
  return `/${out.join('/')}`;
}

/**
 * Where the path of an absolute-form target starts (`http://host/a` → the index of
 * `/a`, or `end` when it has none), or -1 when `path` does not start with
 * `scheme://` (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
 */
function afterAuthority(path: string, end: number): number {
  let i = 0;
  for (; i < end; i++) {
    const c = path.charCodeAt(i);
    const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    if (!letter && (i === 0 || !((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === DOT))) break;
  }
  if (i === 0 || i + 3 > end || path.charCodeAt(i) !== 0x3a || path.charCodeAt(i + 1) !== SLASH || path.charCodeAt(i + 2) !== SLASH) return -1;
  const slash = path.indexOf('/', i + 3);
  return slash < 0 || slash > end ? end : slash;
}

/** The segment path[from, to) with escapes decoded or upper-cased, and each stray `%` written `%25`. */
function normalSegment(path: string, from: number, to: number): string {
  let out = '';
  let copied = from;
  for (let i = from; i < to; i++) {
    if (path.charCodeAt(i) === PERCENT) {
      const h = i + 2 < to ? hexValue(path.charCodeAt(i + 1)) : -1;
      const l = i + 2 < to ? hexValue(path.charCodeAt(i + 2)) : -1;
      if (h < 0 || l < 0) {
        out += `${path.slice(copied, i)}%25`;
        copied = i + 1;
        continue;
      }
      const code = h * 16 + l;
      out += path.slice(copied, i) + (DECODED[code] === 1 ? String.fromCharCode(code) : `%${HEX_DIGITS[h]}${HEX_DIGITS[l]}`);
      copied = i + 3;
      i += 2;
    }
  }
  return copied === from ? path.slice(from, to) : out + path.slice(copied, to);
}

const HEX_DIGITS = '0123456789ABCDEF';
