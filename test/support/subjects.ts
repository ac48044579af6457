import fc from 'fast-check';
import { boundValue, escapeValue, formatIp, hashApiKey, parseIp } from '@banstream/core';

/** What a request says about its client, as the enforcer is asked (POST /v1/check, createEnforcer().check). */
export interface Carrier {
  ip: string;
  userId?: string;
  apiKey?: string;
  path?: string;
  headers?: Record<string, string>;
  country?: string;
}

/** One subject the control API accepts, as an operator types it, and requests that do and do not carry it. */
export interface SubjectCase {
  kind: 'user' | 'apikey' | 'ipv4' | 'ipv6' | 'mapped' | 'cidr4' | 'cidr6' | 'cidr-mapped' | 'path' | 'header' | 'country' | 'ip+path' | 'cidr+user';
  /** The text given to `bans add` / `allow add` (POST /v1/bans, POST /v1/allowlist). */
  typed: string;
  carrier: Carrier;
  /** A request that does not carry the subject; absent when every request does (a /0). */
  other?: Carrier;
}

export interface SubjectCaseOptions {
  /** Longest user id, in UTF-16 units (the sidecar's body takes 256). */
  maxUserLength: number;
  /** Narrowest networks generated, as the control API's guard rails may refuse wider ones without force. */
  minBits: { v4: number; v6: number };
  /** Only well-formed UTF-16 (what a URL or a JSON body round-trips); else lone surrogates too. */
  wellFormed: boolean;
}

/** Characters that subject values escape or that sit on a boundary: `|`, `%`, controls, the `h:` of a digest, non-ASCII. */
const TRICKY = ['|', '%', '%7C', ':', 'h', 'h:', '\n', '\r', '\t', '\u0000', '\u001f', '\u007f', '\u0085', '\u009f', ' ', 'é', '€', '中', '😀', 'a', '0', '\\', '"', '/'];

/** Who sends the requests of user and API-key cases: an address nothing else in these cases can cover. */
const IDENTITY_CARRIER_IP = '192.0.2.1';

const byteArray = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });

/**
 * User ids that stress the subject text: escaped characters, control characters,
 * non-ASCII, and ids over 128 bytes that are hashed. An id ending in white space is
 * left out: an operator's text is trimmed, so its subject is the trimmed id's.
 */
function userIds(o: SubjectCaseOptions): fc.Arbitrary<string> {
  const unit = o.wellFormed ? 'grapheme' : 'binary';
  return fc
    .oneof(
      fc.string({ unit, minLength: 1, maxLength: 40 }),
      fc.array(fc.constantFrom(...TRICKY), { minLength: 1, maxLength: 30 }).map((parts) => parts.join('')),
      fc.string({ unit: 'grapheme-ascii', minLength: 120, maxLength: o.maxUserLength }),
      fc.array(fc.constantFrom('é', '€', '中', '😀', '|', '%'), { minLength: 40, maxLength: Math.floor(o.maxUserLength / 2) }).map((p) => p.join('')),
    )
    .map((u) => u.slice(0, o.maxUserLength))
    .filter((u) => u.length > 0 && u.trimEnd() === u);
}

/** Bytes with `bit` (0 = the first) flipped: an address outside any network of that many bits or more holding `bytes`. */
function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const out = Uint8Array.from(bytes);
  out[bit >>> 3] = out[bit >>> 3]! ^ (0x80 >>> (bit & 7));
  return out;
}

const upper = fc.boolean();

/** Subject kinds an allowlist entry may name (canonicalAllowEntry refuses the others). */
export const ALLOWLIST_KINDS: ReadonlySet<SubjectCase['kind']> = new Set(['user', 'apikey', 'ipv4', 'ipv6', 'mapped', 'cidr4', 'cidr6', 'cidr-mapped']);

/** Free text a subject value escapes or hashes; no trailing white space (typed text is trimmed). */
function values(o: SubjectCaseOptions, maxLength: number): fc.Arbitrary<string> {
  return fc
    .oneof(
      fc.array(fc.constantFrom(...TRICKY, 'x', 'y', '-'), { minLength: 1, maxLength: 30 }).map((parts) => parts.join('')),
      fc.string({ unit: o.wellFormed ? 'grapheme' : 'binary', minLength: 1, maxLength }),
    )
    .filter((v) => v.length > 0 && v.trimEnd() === v);
}

export function subjectCases(o: SubjectCaseOptions): fc.Arbitrary<SubjectCase> {
  const user = fc.tuple(userIds(o), fc.constantFrom<'escaped' | 'listed'>('escaped', 'listed')).map(
    ([u, form]): SubjectCase => ({
      kind: 'user',
      // As typed by hand (the value escaped as the README says), or as a listed ban shows it (bounded: long ids hashed).
      typed: `user:${form === 'escaped' ? escapeValue(u) : boundValue(u)!}`,
      carrier: { ip: IDENTITY_CARRIER_IP, userId: u },
      other: { ip: IDENTITY_CARRIER_IP, userId: `${u}x` },
    }),
  );
  const apikey = fc.tuple(fc.string({ unit: o.wellFormed ? 'grapheme' : 'binary', minLength: 1, maxLength: 80 }), fc.constantFrom(32, 64), upper).map(([key, hex, up]): SubjectCase => {
    const hash = hashApiKey(key).slice(0, hex);
    return { kind: 'apikey', typed: `apikey:${up ? hash.toUpperCase() : hash}`, carrier: { ip: IDENTITY_CARRIER_IP, apiKey: key }, other: { ip: IDENTITY_CARRIER_IP, apiKey: `${key}x` } };
  });
  const address = (bytes: Uint8Array) => formatIp(bytes);
  const ipv4 = fc.tuple(byteArray(4), fc.boolean()).map(
    ([b, prefixed]): SubjectCase => ({
      kind: 'ipv4',
      typed: `${prefixed ? 'ip:' : ''}${address(b)}`,
      carrier: { ip: address(b) },
      other: { ip: address(flipBit(b, 31)) },
    }),
  );
  const ipv6 = fc
    .tuple(byteArray(16), fc.boolean(), upper)
    .filter(([b]) => !isMapped(b))
    .map(([b, prefixed, up]): SubjectCase => {
      const text = address(b);
      return { kind: 'ipv6', typed: `${prefixed ? 'ip:' : ''}${up ? text.toUpperCase() : text}`, carrier: { ip: text }, other: { ip: address(flipBit(b, 127)) } };
    });
  // IPv4-mapped IPv6 is the IPv4 address: typed either way, sent either way (a dual-stack socket gives the mapped form).
  const mapped = fc.tuple(byteArray(4), fc.boolean(), fc.boolean()).map(([b, typedMapped, sentMapped]): SubjectCase => {
    const v4 = address(b);
    return {
      kind: 'mapped',
      typed: typedMapped ? `::ffff:${v4}` : `ip:${v4}`,
      carrier: { ip: sentMapped ? `::ffff:${v4}` : v4 },
      other: { ip: `::ffff:${address(flipBit(b, 31))}` },
    };
  });
  const network = (family: 4 | 6, mappedForm: boolean) =>
    fc
      .tuple(byteArray(family === 4 ? 4 : 16), fc.integer({ min: family === 4 ? o.minBits.v4 : o.minBits.v6, max: family === 4 ? 32 : 128 }), fc.boolean(), upper)
      .filter(([b]) => family === 4 || !isMapped(b))
      .map(([b, bits, prefixed, up]): SubjectCase => {
        const inside = address(b);
        // People write a network by one of its addresses: the host bits are cleared.
        const text = mappedForm ? `::ffff:${inside}/${96 + bits}` : `${inside}/${bits}`;
        return {
          kind: family === 4 ? (mappedForm ? 'cidr-mapped' : 'cidr4') : 'cidr6',
          typed: `${prefixed ? 'cidr:' : ''}${up ? text.toUpperCase() : text}`,
          carrier: { ip: mappedForm ? `::ffff:${inside}` : inside },
          ...(bits > 0 ? { other: { ip: address(flipBit(b, bits - 1)) } } : {}),
        };
      });
  // Paths: no `?` or `#` (a path subject never holds a query), but the request may carry one.
  const pathValue = values(o, 160).map((v) => `/${v.replace(/[?#]/g, '_')}`);
  const path = pathValue.map(
    (p): SubjectCase => ({
      kind: 'path',
      typed: `path:${escapeValue(p)}`,
      carrier: { ip: IDENTITY_CARRIER_IP, path: `${p}?q=1` },
      other: { ip: IDENTITY_CARRIER_IP, path: `${p}x` },
    }),
  );
  // Header values as an HTTP parser gives them: no leading white space or line breaks.
  const header = fc
    .tuple(
      fc.constantFrom('user-agent', 'x-tenant'),
      values(o, 160)
        .map((v) => v.replace(/[\r\n]/g, '_').trimStart())
        .filter((v) => v.length > 0),
    )
    .map(
      ([name, v]): SubjectCase => ({
        kind: 'header',
        typed: `header.${name}:${escapeValue(v)}`,
        carrier: { ip: IDENTITY_CARRIER_IP, headers: { [name]: v } },
        other: { ip: IDENTITY_CARRIER_IP, headers: { [name]: `${v}x` } },
      }),
    );
  const country = fc.tuple(fc.constantFrom('FR', 'cn', 'Us', 'ZA'), fc.boolean()).map(
    ([c, up]): SubjectCase => ({
      kind: 'country',
      typed: `country:${up ? c.toUpperCase() : c}`,
      carrier: { ip: IDENTITY_CARRIER_IP, country: c },
      other: { ip: IDENTITY_CARRIER_IP, country: c === 'FR' ? 'DE' : 'FR' },
    }),
  );
  // Composites typed in any order: their canonical text puts the network part first, as the aggregator does.
  const ipPath = fc.tuple(byteArray(4), pathValue).map(
    ([b, p]): SubjectCase => ({
      kind: 'ip+path',
      typed: `path:${escapeValue(p)}|ip:${address(b)}`,
      carrier: { ip: address(b), path: p },
      other: { ip: address(b), path: `${p}x` },
    }),
  );
  const cidrUser = fc.tuple(byteArray(4), fc.integer({ min: Math.max(8, o.minBits.v4), max: 31 }), userIds(o)).map(
    ([b, bits, u]): SubjectCase => ({
      kind: 'cidr+user',
      typed: `user:${escapeValue(u)}|cidr:${address(b)}/${bits}`,
      carrier: { ip: address(b), userId: u },
      other: { ip: address(b), userId: `${u}x` },
    }),
  );
  return fc.oneof(user, apikey, ipv4, ipv6, mapped, network(4, false), network(6, false), network(4, true), path, header, country, ipPath, cidrUser);
}

/** `::ffff:a.b.c.d` bytes: parsed as the IPv4 address, so not an IPv6 case. */
function isMapped(b: Uint8Array): boolean {
  return parseIp(formatIp(b)).family === 4;
}
