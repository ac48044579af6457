import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isBanstreamError } from '../errors.js';
import { compileHeaderPattern, headerPatternProblem, MAX_HEADER_PATTERN_INSTRUCTIONS } from './header-pattern.js';

describe('compileHeaderPattern', () => {
  it('finds the pattern anywhere in the value, as RegExp.test does', () => {
    const p = compileHeaderPattern('^(curl|python-requests)/');
    expect(p.test('curl/8.1')).toBe(true);
    expect(p.test('python-requests/2.31')).toBe(true);
    expect(p.test('Mozilla/5.0 curl/8.1')).toBe(false);
    expect(compileHeaderPattern('bot').test('Googlebot/2.1')).toBe(true);
    expect(compileHeaderPattern('^[0-9a-f]{32}$').test('0123456789abcdef0123456789abcdef')).toBe(true);
  });

  it('agrees with V8 RegExp on patterns both read alike, on short values where backtracking is harmless', () => {
    const patterns = ['^(curl|python-requests)/', 'a+b', '[0-9]{2,3}$', '^(a|ab)(c|bcd)(d*)$', 'x.y', '(?:ab)*c', '^$', '[^/]+/[^/]+', '\\d\\s\\w', 'a|b|'];
    const value = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'x', 'y', '/', '1', '2', ' ', 'curl', 'python-requests'), { maxLength: 10 }).map((p) => p.join(''));
    const compiled = patterns.map((p) => ({ re2: compileHeaderPattern(p), v8: new RegExp(p), p }));
    fc.assert(
      fc.property(fc.constantFrom(...compiled), value, ({ re2, v8 }, v) => {
        expect(re2.test(v)).toBe(v8.test(v));
      }),
      { numRuns: 3_000 },
    );
  });

  it('refuses what the linear-time matcher cannot run, with the reason', () => {
    const cases: [string, RegExp][] = [
      ['(a)\\1', /invalid escape sequence: `\\1`: backreferences cannot run in linear time/],
      ['(?<n>a)\\k<n>', /backreferences cannot run in linear time/],
      ['foo(?=bar)', /unsupported Perl syntax: `\(\?=`: lookahead and lookbehind cannot run in linear time/],
      ['foo(?!bar)', /lookahead and lookbehind/],
      ['(?<=a)b', /lookahead and lookbehind/],
      ['(?<!a)b', /lookahead and lookbehind/],
      ['(bot', /^is not a valid RE2 regular expression: missing closing \)/],
      ['a{1001}', /invalid repeat count/],
      ['[a-z]{700}', new RegExp(`^compiles to \\d+ instructions, more than the ${MAX_HEADER_PATTERN_INSTRUCTIONS}`)],
    ];
    for (const [pattern, reason] of cases) {
      expect(headerPatternProblem(pattern), pattern).toMatch(reason);
      let thrown: unknown;
      try {
        compileHeaderPattern(pattern);
      } catch (error) {
        thrown = error;
      }
      expect(isBanstreamError(thrown, 'POLICY_INVALID'), pattern).toBe(true);
    }
  });

  it('accepts any literal pattern of the longest length a policy allows', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 512, maxLength: 512, unit: 'binary-ascii' }), (text) => {
        expect(headerPatternProblem(text.replace(/[\\.+*?()|[\]{}^$]/g, 'x'))).toBeUndefined();
      }),
      { numRuns: 50 },
    );
    expect(headerPatternProblem('€'.repeat(512))).toBeUndefined();
  });
});
