import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '../errors.js';
import { formatDuration, parseDuration, tryParseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['7d', 604_800_000],
    [30, 30_000],
  ] as const)('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '0s', '1.5s', '-1s', '10', '1w', '1 h', '01s', '1H'])('refuses %j with POLICY_INVALID', (text) => {
    expect(() => parseDuration(text)).toThrow(/invalid duration .*500ms, 30s, 5m, 1h, 7d/);
    try {
      parseDuration(text);
    } catch (err) {
      expect(isBanstreamError(err, 'POLICY_INVALID')).toBe(true);
    }
  });

  it('refuses zero, negative and fractional seconds', () => {
    for (const n of [0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(tryParseDuration(n)).toBeUndefined();
  });

  it('refuses durations too large to count exactly in ms', () => {
    expect(tryParseDuration('999999999999999999d')).toBeUndefined();
    expect(tryParseDuration(Number.MAX_SAFE_INTEGER)).toBeUndefined();
  });
});

describe('formatDuration', () => {
  it('uses the largest unit that divides exactly', () => {
    expect(formatDuration(1)).toBe('1ms');
    expect(formatDuration(1_500)).toBe('1500ms');
    expect(formatDuration(90_000)).toBe('90s');
    expect(formatDuration(3_600_000)).toBe('1h');
    expect(formatDuration(86_400_000 * 365)).toBe('365d');
    expect(formatDuration(0)).toBe('0ms');
  });

  it('refuses negative and fractional input', () => {
    expect(() => formatDuration(-1)).toThrow(RangeError);
    expect(() => formatDuration(0.5)).toThrow(RangeError);
  });

  it('round-trips through parseDuration for every positive integer of ms', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });

  it('round-trips whole units exactly as written', () => {
    const unit = fc.constantFrom('ms', 's', 'm', 'h', 'd');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), unit, (n, u) => {
        const ms = parseDuration(`${n}${u}`);
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });
});
