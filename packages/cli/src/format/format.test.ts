import { describe, expect, it } from 'vitest';
import { progressLine } from './progress.js';
import { relative, table } from './table.js';

describe('table', () => {
  it('aligns columns under their headers, numbers to the right, and clips long values', () => {
    const rows = [
      { s: 'ip:203.0.113.9', n: 5, r: 'a rather long reason' },
      { s: 'user:42', n: 120, r: 'x' },
    ];
    expect(
      table(rows, [
        { header: 'SUBJECT', value: (r) => r.s },
        { header: 'N', value: (r) => String(r.n), right: true },
        { header: 'REASON', value: (r) => r.r, max: 10 },
      ]),
    ).toBe(['SUBJECT           N  REASON', 'ip:203.0.113.9    5  a rather …', 'user:42         120  x'].join('\n'));
    expect(table([], [{ header: 'X', value: () => '' }])).toBe('(none)');
  });

  it('says times relative to now', () => {
    expect(relative(3_600_000, 0)).toBe('in 1h');
    expect(relative(0, 90_000)).toBe('2m ago');
  });
});

describe('progressLine', () => {
  it('draws the share done', () => {
    expect(progressLine(250, 1000, 'records', 10)).toBe('[###-------]  25%  250/1,000 records');
    expect(progressLine(0, 0, 'records', 4)).toBe('[----]   0%  0/0 records');
    expect(progressLine(5, 4, 'records', 4)).toBe('[####] 100%  5/4 records');
  });
});
