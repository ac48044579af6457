import type { RequestAttributes } from './attributes.js';
import { networkPrefix } from './cidr.js';
import { dimensionScope, parseKey, type KeyDimension } from './dimensions.js';
import { tryParseIp, type IpAddress } from './ip.js';
import { isValidStatus, ownValue, statusClass } from './normalise.js';
import { API_KEY_SUBJECT_HEX_CHARS, boundValue, hashValue } from './values.js';

/** The subject a request counts under for one key, or undefined when a dimension is missing. */
export type SubjectFn = (attrs: RequestAttributes) => string | undefined;

/** Separates the parts of a composite subject; escaped inside values. */
export const SUBJECT_SEPARATOR = '|';

type Extract = (attrs: RequestAttributes) => string | undefined;

/**
 * Compiles a key once (at policy load) into the per-request function. Dimensions are
 * put in canonical order, so `[user, ip]` and `[ip, user]` give the same subject:
 * `ip:203.0.113.7|user:42`. Throws SUBJECT_INVALID_DIMENSION for a bad key.
 */
export function compileKey(key: readonly (KeyDimension | string)[]): SubjectFn {
  const dims = parseKey(key);
  const prefixes = dims.map((d) => `${dimensionScope(d)}:`);
  const extracts = dims.map(extractor);
  if (dims.length === 1) {
    const prefix = prefixes[0]!;
    const extract = extracts[0]!;
    return (attrs) => {
      const value = extract(attrs);
      return value === undefined ? undefined : prefix + value;
    };
  }
  // Separator folded into the prefixes: one concatenation per part.
  const joined = prefixes.map((p, i) => (i === 0 ? p : SUBJECT_SEPARATOR + p));
  return (attrs) => {
    let subject = '';
    for (let i = 0; i < extracts.length; i++) {
      const value = extracts[i]!(attrs);
      if (value === undefined) return undefined;
      subject += joined[i]! + value;
    }
    return subject;
  };
}

/** A one-dimension key's subject in two parts: subject = scope + valueOf(attrs). */
export interface KeyParts {
  /** `ip:`, `user:`, …: the dimension's scope and the colon. */
  scope: string;
  valueOf: (attrs: RequestAttributes) => string | undefined;
}

/**
 * The two parts of a one-dimension key's subject (undefined for composite keys), for
 * callers that can use them apart instead of joining them per request: a joined
 * string is a rope in V8, copied flat on its first character read.
 */
export function keyParts(key: readonly (KeyDimension | string)[]): KeyParts | undefined {
  const dims = parseKey(key);
  if (dims.length !== 1) return undefined;
  return { scope: `${dimensionScope(dims[0]!)}:`, valueOf: extractor(dims[0]!) };
}

const compiled = new WeakMap<readonly (KeyDimension | string)[], SubjectFn>();

/**
 * subjectFor(key, attrs) = compileKey(key)(attrs), with the compiled function cached
 * per key array (treat it as immutable): keep the array (a policy's `key`) to benefit;
 * hot paths should hold compileKey's result themselves.
 */
export function subjectFor(key: readonly (KeyDimension | string)[], attrs: RequestAttributes): string | undefined {
  let fn = compiled.get(key);
  if (fn === undefined) {
    fn = compileKey(key);
    compiled.set(key, fn);
  }
  return fn(attrs);
}

/**
 * The value of one dimension, ready for a subject: bounded and escaped (values.ts).
 * Values of a closed form (addresses, statuses, hashes, numbers) need neither.
 * Cookie values are always hashed: they are mostly session tokens, and subjects
 * land in Kafka keys, logs and the admin API, where a bearer credential must not.
 */
function extractor(d: KeyDimension): Extract {
  switch (d.kind) {
    case 'ip':
      return (a) => (a.ip.length > 0 ? a.ip : undefined);
    case 'prefix': {
      const v4 = d.v4!; // parseKey filled in the defaults
      const v6 = d.v6!;
      return (a) => {
        const ip = a.ipAddress ?? tryParseIp(a.ip);
        return ip === undefined ? undefined : networkPrefix(ip, ip.family === 4 ? v4 : v6);
      };
    }
    case 'user':
      return (a) => boundValue(a.userId);
    case 'apikey':
      return (a) => (a.apiKeyHash ? a.apiKeyHash.slice(0, API_KEY_SUBJECT_HEX_CHARS) : undefined);
    case 'header': {
      const name = d.name;
      return (a) => boundValue(ownValue(a.headers, name));
    }
    case 'cookie': {
      const name = d.name;
      return (a) => {
        const value = ownValue(a.cookies, name);
        return value ? hashValue(value) : undefined;
      };
    }
    case 'method':
      return (a) => boundValue(a.method);
    case 'host':
      return (a) => boundValue(a.host);
    case 'path':
      return (a) => boundValue(a.path);
    case 'route':
      return (a) => boundValue(a.route);
    case 'status':
      return (a) => (a.status !== undefined && isValidStatus(a.status) ? String(a.status) : undefined);
    case 'status_class':
      return (a) => statusClass(a.status);
    case 'country':
      return (a) => boundValue(a.country);
    case 'region':
      return (a) => boundValue(a.region);
    case 'asn':
      return (a) => (a.asn === undefined ? undefined : String(a.asn));
  }
}

/**
 * The subjects a check looks up on every request besides its policies' (its address,
 * user and API key): compiled keys like any policy's, so the enforcer's lookups, the
 * allowlist, the aggregator's bans and the control API's (canonicalSubject) are one
 * text. `user:` + the raw id would miss every id that is escaped or hashed.
 */
export const ipSubjectOf: SubjectFn = compileKey(['ip']);
export const userSubjectOf: SubjectFn = compileKey(['user']);
export const apiKeySubjectOf: SubjectFn = compileKey(['apikey']);

/** The `ip:` subject of an address: ipSubjectOf for callers that hold the parsed address only. */
export function addressSubject(address: IpAddress): string {
  return `ip:${address.text}`;
}
