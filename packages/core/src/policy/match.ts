import { compileGlob } from './glob.js';
import { compileHeaderPattern } from './header-pattern.js';
import type { MatchSpec } from './schema.js';

/** The request fields a match block reads (a structural subset of RequestAttributes). */
export interface MatchableRequest {
  method: string;
  host: string;
  path: string;
  status?: number | undefined;
  headers: Readonly<Record<string, string>>;
  country?: string | undefined;
  region?: string | undefined;
}

export type RequestPredicate = (request: MatchableRequest) => boolean;

export interface CompileMatchOptions {
  /**
   * The predicate for a request being checked, before it has a response: without the
   * status conditions. They choose which responses count towards a threshold (the
   * aggregator), not which requests a ban or throttle applies to (the enforcer).
   */
  atCheck?: boolean;
}

/**
 * Compiles a match block into one predicate. Every listed condition must hold (AND);
 * within a list any value may match (OR). Header patterns and globs are compiled
 * here, once per policy load, never per request, into matchers that run in time
 * linear in the request's value (glob.ts, header-pattern.ts).
 */
export function compileMatch(spec: MatchSpec | undefined, options: CompileMatchOptions = {}): RequestPredicate {
  if (!spec) return () => true;
  const checks: RequestPredicate[] = [];
  if (spec.methods) {
    const methods = new Set(spec.methods);
    checks.push((r) => methods.has(r.method));
  }
  if (spec.hosts) checks.push(hostMatcher(spec.hosts));
  if (spec.pathPrefixes || spec.paths) checks.push(pathMatcher(spec.pathPrefixes ?? [], spec.paths ?? []));
  for (const header of spec.headers ?? []) checks.push(headerMatcher(header));
  if (spec.countries) {
    const countries = new Set(spec.countries);
    checks.push((r) => r.country !== undefined && countries.has(r.country));
  }
  if (spec.regions) {
    const regions = new Set(spec.regions);
    checks.push((r) => r.region !== undefined && regions.has(r.region));
  }
  if ((spec.statuses || spec.statusClasses) && options.atCheck !== true) {
    const statuses = new Set(spec.statuses ?? []);
    const classes = new Set((spec.statusClasses ?? []).map((c) => Number(c[0])));
    // A request without a response yet (the enforcer asks before answering) does not count.
    checks.push((r) => r.status !== undefined && (statuses.has(r.status) || classes.has(Math.floor(r.status / 100))));
  }
  // One condition, the common case, is its own predicate: no loop, one call less.
  if (checks.length === 0) return () => true;
  if (checks.length === 1) return checks[0]!;
  return (r) => {
    for (let i = 0; i < checks.length; i++) if (!checks[i]!(r)) return false;
    return true;
  };
}

/**
 * Paths without a `*` are compared whole (a set lookup, not a regular expression per
 * request). The common specs, only whole paths or only prefixes, get a predicate that
 * does nothing else.
 */
function pathMatcher(prefixes: readonly string[], paths: readonly string[]): RequestPredicate {
  const exact = new Set(paths.filter((p) => !p.includes('*')));
  const globs = paths.filter((p) => p.includes('*')).map(compileGlob);
  const hasPrefix = (path: string) => {
    for (let i = 0; i < prefixes.length; i++) if (path.startsWith(prefixes[i]!)) return true;
    return false;
  };
  if (globs.length === 0 && prefixes.length === 0) return (r) => exact.has(r.path);
  if (globs.length === 0 && exact.size === 0) return (r) => hasPrefix(r.path);
  return (r) => {
    const path = r.path;
    if (exact.has(path) || hasPrefix(path)) return true;
    for (let i = 0; i < globs.length; i++) if (globs[i]!(path)) return true;
    return false;
  };
}

function hostMatcher(hosts: readonly string[]): RequestPredicate {
  const exact = new Set(hosts.filter((h) => !h.startsWith('*.')).map((h) => h.toLowerCase()));
  const suffixes = hosts.filter((h) => h.startsWith('*.')).map((h) => h.slice(1).toLowerCase());
  return (r) => exact.has(r.host) || suffixes.some((s) => r.host.endsWith(s));
}

type HeaderSpec = NonNullable<MatchSpec['headers']>[number];

function headerMatcher(h: HeaderSpec): RequestPredicate {
  const name = h.name.toLowerCase();
  if (h.present !== undefined) return (r) => (r.headers[name] !== undefined) === h.present;
  if (h.equals !== undefined) return (r) => r.headers[name] === h.equals;
  if (h.contains !== undefined) {
    const needle = h.contains;
    return (r) => r.headers[name]?.includes(needle) ?? false;
  }
  if (h.matches !== undefined) {
    const re = compileHeaderPattern(h.matches);
    return (r) => {
      const value = r.headers[name];
      return value !== undefined && re.test(value);
    };
  }
  return () => true;
}
