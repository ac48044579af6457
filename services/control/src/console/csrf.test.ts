import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { csrfMatches, needsCsrf } from './csrf.js';

describe('CSRF check', () => {
  const token = 'q9mS0p7uZlIY2r6n0Hk7Tq0k3m2bYh8u1w4e5r6t7y8';

  it('accepts the session token and nothing else', () => {
    expect(csrfMatches(token, token)).toBe(true);
    expect(csrfMatches(token, undefined)).toBe(false);
    expect(csrfMatches(token, '')).toBe(false);
    expect(csrfMatches(token, token.slice(0, -1))).toBe(false);
    expect(csrfMatches(token, `${token}a`)).toBe(false);
    expect(csrfMatches(token, token.toUpperCase())).toBe(false);
    expect(csrfMatches(token, [token, token])).toBe(false);
    expect(csrfMatches(token, 'x'.repeat(10_000))).toBe(false);
  });

  it('agrees with plain equality on any pair of strings', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 64 }), fc.string({ maxLength: 80 }), (expected, presented) => {
        expect(csrfMatches(expected, presented)).toBe(presented === expected);
        expect(csrfMatches(expected, expected)).toBe(true);
      }),
    );
  });

  it('is needed on every method but the safe ones', () => {
    expect(['GET', 'HEAD', 'OPTIONS', 'get'].map(needsCsrf)).toEqual([false, false, false, false]);
    expect(['POST', 'PUT', 'PATCH', 'DELETE', 'post'].map(needsCsrf)).toEqual([true, true, true, true, true]);
  });
});
