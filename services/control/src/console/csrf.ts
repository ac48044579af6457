import { createHash, timingSafeEqual } from 'node:crypto';

/** The header a console page sends its session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

/** Methods that change nothing: the only ones a session cookie may make without the CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function needsCsrf(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

/**
 * Whether the presented token is the session's, in constant time: both are hashed
 * first, so the comparison is of equal lengths and its time says nothing about how
 * much of the token matched (or how long it is).
 */
export function csrfMatches(expected: string, presented: string | string[] | undefined): boolean {
  if (typeof presented !== 'string' || presented.length === 0 || presented.length > 256) return false;
  const a = createHash('sha256').update(expected, 'utf8').digest();
  const b = createHash('sha256').update(presented, 'utf8').digest();
  return timingSafeEqual(a, b);
}
