/**
 * Path globs without backtracking. `*` is any run of characters other than `/` (within
 * one segment), `**` any run of characters at all; every other character stands for
 * itself. A regular expression built from a glob (`**` as `.*`) backtracks: against
 * `/**\/**\/**\/**\/admin` one 800-character path took seconds. Here the common
 * shapes (a prefix, a suffix, both) are string comparisons, a glob of `*` only is
 * matched segment by segment, and the rest read the path once per token, keeping the
 * set of positions the tokens so far can end at: O(path length × glob length) at worst.
 */

import { BanstreamError, isBanstreamError } from '../errors.js';

export type PathPredicate = (path: string) => boolean;

/**
 * Each wildcard is one more pass over the path: 256 of them took 170 ms against an
 * 8 KB path, 16 take a few (linear-time.test.ts). Real globs have two or three.
 */
export const MAX_GLOB_WILDCARDS = 16;

const LITERAL = 0;
const STAR = 1;
const GLOBSTAR = 2;
type Kind = typeof LITERAL | typeof STAR | typeof GLOBSTAR;

const SLASH = 0x2f;
const ASTERISK = 0x2a;

interface Tokens {
  kinds: Kind[];
  /** The text of each literal token ('' for the stars). */
  texts: string[];
}

/**
 * Compiles a glob once per policy load; the predicate allocates nothing per path it
 * reads. Throws POLICY_INVALID (details.reason) past MAX_GLOB_WILDCARDS.
 */
export function compileGlob(glob: string): PathPredicate {
  const { kinds, texts } = tokenise(glob);
  const wildcards = kinds.filter((k) => k !== LITERAL).length;
  if (wildcards > MAX_GLOB_WILDCARDS) {
    const reason = `has ${wildcards} wildcards, more than the ${MAX_GLOB_WILDCARDS} a glob may have (each one is another pass over the path)`;
    throw new BanstreamError('POLICY_INVALID', `path glob ${JSON.stringify(glob.slice(0, 80))} ${reason}`, { details: { reason } });
  }
  const shape = kinds.join('');
  if (shape === '0' || shape === '') return (path) => path === glob;
  if (shape === '2') return () => true;
  if (shape === '02') {
    const prefix = texts[0]!;
    return (path) => path.startsWith(prefix);
  }
  if (shape === '20') {
    const suffix = texts[1]!;
    return (path) => path.endsWith(suffix);
  }
  if (shape === '020') {
    const prefix = texts[0]!;
    const suffix = texts[2]!;
    const least = prefix.length + suffix.length;
    return (path) => path.length >= least && path.startsWith(prefix) && path.endsWith(suffix);
  }
  if (!kinds.includes(GLOBSTAR)) return (path) => matchSegments(kinds, texts, path);
  // One row of reachable positions, kept between calls and grown to the longest path seen.
  let row = new Uint8Array(64);
  return (path) => {
    if (row.length <= path.length) row = new Uint8Array(Math.max(path.length + 1, row.length * 2));
    return matchTokens(kinds, texts, path, row);
  };
}

/** Why `glob` cannot be compiled, or undefined if it can: validation's words. */
export function globProblem(glob: string): string | undefined {
  try {
    compileGlob(glob);
    return undefined;
  } catch (error) {
    if (isBanstreamError(error, 'POLICY_INVALID') && typeof error.details.reason === 'string') return error.details.reason;
    throw error;
  }
}

/** Runs of `*` of two or more are one `**` (`.*[^/]*` is `.*`), as the regular-expression reading had them. */
function tokenise(glob: string): Tokens {
  const kinds: Kind[] = [];
  const texts: string[] = [];
  let i = 0;
  while (i < glob.length) {
    if (glob.charCodeAt(i) === ASTERISK) {
      let j = i;
      while (j < glob.length && glob.charCodeAt(j) === ASTERISK) j++;
      kinds.push(j - i >= 2 ? GLOBSTAR : STAR);
      texts.push('');
      i = j;
    } else {
      const next = glob.indexOf('*', i);
      const end = next < 0 ? glob.length : next;
      kinds.push(LITERAL);
      texts.push(glob.slice(i, end));
      i = end;
    }
  }
  return { kinds, texts };
}

/**
 * A glob whose wildcards are all `*`: since none crosses a `/`, the glob's segments
 * match the path's one for one, and within a segment the classic greedy matcher is
 * exact (on a mismatch only the last `*` needs to take one more character). Taking
 * a `/` ends the attempt. O(path × glob) at worst, one pass for the usual globs.
 */
function matchSegments(kinds: readonly Kind[], texts: readonly string[], path: string): boolean {
  const n = path.length;
  let t = 0;
  let p = 0;
  let starT = -1;
  let starP = 0;
  for (;;) {
    if (t === kinds.length) {
      if (p === n) return true;
    } else if (kinds[t] === STAR) {
      starT = t++;
      starP = p;
      continue;
    } else if (literalAt(path, texts[t]!, p)) {
      p += texts[t]!.length;
      t++;
      continue;
    }
    // A mismatch: the last star takes one more character, if it may, and then up to
    // where the literal after it could start (its first character, or a `/`).
    if (starT < 0 || starP >= n || path.charCodeAt(starP) === SLASH) return false;
    starP++;
    const first = starT + 1 < kinds.length ? texts[starT + 1]!.charCodeAt(0) : SLASH;
    while (starP < n && path.charCodeAt(starP) !== first && path.charCodeAt(starP) !== SLASH) starP++;
    t = starT + 1;
    p = starP;
  }
}

/** path.startsWith(text, p), without the call into the runtime (twice as fast for these short texts). */
function literalAt(path: string, text: string, p: number): boolean {
  if (p + text.length > path.length) return false;
  for (let i = 0; i < text.length; i++) if (path.charCodeAt(p + i) !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * `row[p]` is 1 when the tokens read so far can match `path[0, p)`, for p in [lo, hi]
 * (both reachable; outside that window the row holds stale values and is never read).
 * Each token rewrites the window in place.
 */
function matchTokens(kinds: readonly Kind[], texts: readonly string[], path: string, row: Uint8Array): boolean {
  const n = path.length;
  row[0] = 1;
  let lo = 0;
  let hi = 0;
  for (let t = 0; t < kinds.length; t++) {
    const kind = kinds[t]!;
    if (kind === GLOBSTAR) {
      // A `**` at the end takes whatever is left.
      if (t === kinds.length - 1) return true;
      row.fill(1, lo, n + 1);
      hi = n;
    } else if (kind === STAR) {
      // Reachable: q >= some reachable p, with no `/` in path[p, q).
      let carry = false;
      let last = -1;
      for (let q = lo; q <= n; q++) {
        if (q <= hi) {
          if (row[q] === 1) carry = true;
        } else if (!carry) break;
        row[q] = carry ? 1 : 0;
        if (carry) last = q;
        if (q < n && path.charCodeAt(q) === SLASH) carry = false;
      }
      hi = last;
    } else {
      const text = texts[t]!;
      const k = text.length;
      // The last token must end where the path does: one position to try.
      if (t === kinds.length - 1) {
        const p = n - k;
        return p >= lo && p <= hi && row[p] === 1 && literalAt(path, text, p);
      }
      // Downwards, so each target (p + k > p) is written after its own value was read.
      let newLo = -1;
      let newHi = -1;
      for (let p = Math.min(hi, n - k); p >= lo; p--) {
        const ok = row[p] === 1 && literalAt(path, text, p);
        row[p + k] = ok ? 1 : 0;
        if (ok) {
          if (newHi < 0) newHi = p + k;
          newLo = p + k;
        }
      }
      if (newLo < 0) return false;
      lo = newLo;
      hi = newHi;
    }
  }
  return hi === n;
}
