import { describe, expect, it } from 'vitest';
import { Deadlines } from './deadlines.js';

describe('Deadlines', () => {
  it('answers the calls past the bound as late, in start order, and leaves the others to their callers', () => {
    let now = 1000;
    const late: string[] = [];
    const deadlines = new Deadlines<string>(
      100,
      (e) => late.push(e),
      () => now,
    );
    deadlines.add('a');
    now = 1050;
    deadlines.add('b');
    deadlines.add('c');
    expect(deadlines.settle('c')).toBe(true);
    now = 1100;
    deadlines.sweep();
    expect(late).toEqual(['a']);
    expect(deadlines.settle('a')).toBe(false);
    now = 1149;
    deadlines.sweep();
    expect(late).toEqual(['a']);
    now = 1150;
    deadlines.sweep();
    expect([late, deadlines.size]).toEqual([['a', 'b'], 0]);
  });
});
