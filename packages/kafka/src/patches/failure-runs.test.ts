import { describe, expect, it } from 'vitest';
import { FailureRuns } from './failure-runs.js';

describe('FailureRuns', () => {
  it('takes failures less than the gap apart for one run, and a longer pause for the start of another', () => {
    const runs = new FailureRuns(1_000);
    const owner = {};
    expect(runs.failed(owner, 10_000)).toBe(0);
    expect(runs.failed(owner, 10_900)).toBe(900);
    expect(runs.failed(owner, 11_800)).toBe(1_800);
    expect(runs.failed(owner, 12_801)).toBe(0);
  });

  it('counts the gap from the end of the last handling, and keeps each owner apart', () => {
    const runs = new FailureRuns(1_000);
    const a = {};
    const b = {};
    runs.failed(a, 0);
    runs.handled(a, 2_500);
    expect(runs.failed(a, 3_400)).toBe(3_400);
    expect(runs.failed(b, 3_400)).toBe(0);
    runs.handled({}, 5_000);
  });
});
