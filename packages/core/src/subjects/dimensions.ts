import { BanstreamError } from '../errors.js';

/**
 * Key dimensions: what a policy counts requests by. The order of this list is the
 * canonical order of parts in a composite subject, whatever order a policy lists
 * them in: network first, then identity, request, response and geography.
 */
export const DIMENSION_KINDS = ['ip', 'prefix', 'user', 'apikey', 'header', 'cookie', 'method', 'host', 'path', 'route', 'status', 'status_class', 'country', 'region', 'asn'] as const;

export type DimensionKind = (typeof DIMENSION_KINDS)[number];
type PlainKind = Exclude<DimensionKind, 'prefix' | 'header' | 'cookie'>;

export type KeyDimension =
  | { readonly kind: PlainKind }
  /** Network prefix of the client address; bits per family, defaults DEFAULT_PREFIX_BITS. */
  | { readonly kind: 'prefix'; readonly v4?: number; readonly v6?: number }
  /** One request header; the name is case-insensitive and kept in lower case. */
  | { readonly kind: 'header'; readonly name: string }
  /** One cookie; names are case-sensitive (RFC 6265). */
  | { readonly kind: 'cookie'; readonly name: string };

/** A /64 is one IPv6 subnet, usually one customer; a /24 the smallest routed IPv4 block. */
export const DEFAULT_PREFIX_BITS = { v4: 24, v6: 64 } as const;

/** Longest header or cookie name a dimension accepts. */
export const MAX_DIMENSION_NAME_LENGTH = 64;

/**
 * Credentials never leave the edge (RequestEvent.headers), so the aggregator could
 * never count them: refusing them here keeps aggregator and enforcer in agreement.
 */
const REFUSED_HEADERS: ReadonlyMap<string, string> = new Map([
  ['cookie', 'use cookie:<name> to key on one cookie'],
  ['authorization', 'credentials never leave the edge; use apikey or user'],
  ['proxy-authorization', 'credentials never leave the edge; use apikey or user'],
]);

const KIND_INDEX: ReadonlyMap<string, number> = new Map(DIMENSION_KINDS.map((k, i) => [k, i]));

/**
 * Parses the policy text form:
 * `ip`, `prefix` (default bits), `prefix/20` (IPv4 /20, IPv6 default),
 * `prefix/20,48` (IPv4 /20, IPv6 /48), `header:user-agent`, `cookie:session`,
 * and the plain kinds `user`, `apikey`, `method`, `host`, `path`, `route`, `status`,
 * `status_class`, `country`, `region`, `asn`.
 */
export function parseDimension(text: string): KeyDimension {
  if (typeof text !== 'string' || text.length === 0) throw invalidDimension(text, 'empty');
  const colon = text.indexOf(':');
  if (colon >= 0) {
    const kind = text.slice(0, colon);
    if (kind !== 'header' && kind !== 'cookie') throw invalidDimension(text, `only header:<name> and cookie:<name> take a name`);
    return checkDimension({ kind, name: text.slice(colon + 1) }, text);
  }
  if (text === 'prefix' || text.startsWith('prefix/')) {
    if (text === 'prefix') return { kind: 'prefix', v4: DEFAULT_PREFIX_BITS.v4, v6: DEFAULT_PREFIX_BITS.v6 };
    const [v4, v6, extra] = text.slice('prefix/'.length).split(',');
    if (extra !== undefined) throw invalidDimension(text, 'expected prefix/<IPv4 bits> or prefix/<IPv4 bits>,<IPv6 bits>');
    return checkDimension({ kind: 'prefix', v4: decimal(v4, text), v6: v6 === undefined ? DEFAULT_PREFIX_BITS.v6 : decimal(v6, text) }, text);
  }
  if (text === 'header' || text === 'cookie') throw invalidDimension(text, `expected ${text}:<name>`);
  if (!KIND_INDEX.has(text)) throw invalidDimension(text, `expected one of ${DIMENSION_KINDS.map(usage).join(', ')}`);
  return { kind: text as PlainKind };
}

/** The text form; parseDimension(formatDimension(d)) is d with its defaults filled in. */
export function formatDimension(dimension: KeyDimension): string {
  const d = checkDimension(dimension, dimension);
  switch (d.kind) {
    case 'prefix':
      if (d.v6 !== DEFAULT_PREFIX_BITS.v6) return `prefix/${d.v4},${d.v6}`;
      return d.v4 === DEFAULT_PREFIX_BITS.v4 ? 'prefix' : `prefix/${d.v4}`;
    case 'header':
    case 'cookie':
      return `${d.kind}:${d.name}`;
    default:
      return d.kind;
  }
}

/**
 * A validated copy: header names lower-cased, prefix defaults filled in. Dimensions
 * may come from JSON, so nothing about their shape is taken on trust.
 */
export function checkDimension(dimension: KeyDimension, input: unknown = dimension): KeyDimension {
  const kind = (dimension as { kind?: unknown } | null)?.kind;
  if (typeof kind !== 'string' || !KIND_INDEX.has(kind)) throw invalidDimension(input, 'unknown kind');
  if (kind === 'prefix') {
    const d = dimension as { v4?: number; v6?: number };
    const v4 = d.v4 ?? DEFAULT_PREFIX_BITS.v4;
    const v6 = d.v6 ?? DEFAULT_PREFIX_BITS.v6;
    if (!isBits(v4, 32)) throw invalidDimension(input, `IPv4 prefix bits are 0 to 32, not ${String(v4)}`);
    if (!isBits(v6, 128)) throw invalidDimension(input, `IPv6 prefix bits are 0 to 128, not ${String(v6)}`);
    return { kind, v4, v6 };
  }
  if (kind === 'header' || kind === 'cookie') {
    const name = (dimension as { name?: unknown }).name;
    if (typeof name !== 'string' || name.length === 0) throw invalidDimension(input, `${kind} needs a name`);
    if (name.length > MAX_DIMENSION_NAME_LENGTH) throw invalidDimension(input, `${kind} name longer than ${MAX_DIMENSION_NAME_LENGTH}`);
    if (!isToken(name)) throw invalidDimension(input, `${kind} name may only hold letters, digits and !#$&'*+-.^_\`~`);
    if (kind === 'cookie') return { kind, name };
    const lower = name.toLowerCase();
    const refused = REFUSED_HEADERS.get(lower);
    if (refused !== undefined) throw invalidDimension(input, `header ${lower} cannot be a key: ${refused}`);
    return { kind, name: lower };
  }
  return { kind: kind as PlainKind };
}

/** The scope of a subject part: `cidr` for prefixes (DESIGN.md), `header.<name>`, `cookie.<name>`. */
export function dimensionScope(d: KeyDimension): string {
  switch (d.kind) {
    case 'prefix':
      return 'cidr';
    case 'header':
    case 'cookie':
      return `${d.kind}.${d.name}`;
    default:
      return d.kind;
  }
}

/** Canonical order: by kind as listed in DIMENSION_KINDS, then header or cookie name. */
export function compareDimensions(a: KeyDimension, b: KeyDimension): number {
  const byKind = (KIND_INDEX.get(a.kind) ?? 0) - (KIND_INDEX.get(b.kind) ?? 0);
  if (byKind !== 0) return byKind;
  const an = 'name' in a ? a.name : '';
  const bn = 'name' in b ? b.name : '';
  return an < bn ? -1 : an > bn ? 1 : 0;
}

/**
 * A whole key: each dimension parsed or checked, sorted into canonical order, at
 * least one, and no two with the same scope (`[ip, ip]`, or two prefixes).
 */
export function parseKey(key: readonly (KeyDimension | string)[]): KeyDimension[] {
  if (!Array.isArray(key) || key.length === 0) throw invalidDimension(key, 'a key needs at least one dimension');
  const dims = key.map((d) => (typeof d === 'string' ? parseDimension(d) : checkDimension(d)));
  dims.sort(compareDimensions);
  for (let i = 1; i < dims.length; i++) {
    const scope = dimensionScope(dims[i]!);
    if (scope === dimensionScope(dims[i - 1]!)) {
      throw invalidDimension(key, `${formatDimension(dims[i - 1]!)} and ${formatDimension(dims[i]!)} both give scope ${scope}`);
    }
  }
  return dims;
}

function usage(kind: DimensionKind): string {
  if (kind === 'prefix') return 'prefix[/<v4 bits>[,<v6 bits>]]';
  return kind === 'header' || kind === 'cookie' ? `${kind}:<name>` : kind;
}

function decimal(text: string | undefined, input: string): number {
  if (text === undefined || !/^(0|[1-9][0-9]{0,2})$/.test(text)) throw invalidDimension(input, `prefix bits must be decimal numbers, not ${JSON.stringify(text ?? '')}`);
  return Number(text);
}

function isBits(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max;
}

/** RFC 9110 token characters, minus `|` and `%`, which would make a subject ambiguous. */
function isToken(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    if (!alnum && "!#$&'*+-.^_`~".indexOf(name[i]!) < 0) return false;
  }
  return true;
}

function invalidDimension(input: unknown, reason: string): BanstreamError {
  const shown = typeof input === 'string' ? JSON.stringify(input.slice(0, 80)) : (JSON.stringify(input)?.slice(0, 120) ?? String(input));
  return new BanstreamError('SUBJECT_INVALID_DIMENSION', `not a key dimension: ${shown} (${reason})`, { details: { reason } });
}
