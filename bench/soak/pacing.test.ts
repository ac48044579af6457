import { describe, expect, it } from 'vitest';
import { Pacer } from './pacing.js';

describe('Pacer', () => {
  it('hands out rate × elapsed events over regular ticks', () => {
    const pacer = new Pacer(50_000, 10_000);
    let total = 0;
    for (let t = 0; t <= 10_000; t += 50) {
      const n = pacer.take(t);
      if (t > 0) expect(n).toBe(2_500);
      total += n;
    }
    expect(total).toBe(500_000);
  });

  it('catches up at most maxBurst per tick after a stall', () => {
    const pacer = new Pacer(1_000, 100, 10_000);
    expect(pacer.take(1_000)).toBe(100); // 1,000 due, 100 allowed
    expect(pacer.take(1_001)).toBe(100);
    let total = 200;
    for (let t = 1_002; total < 1_000; t++) total += pacer.take(t);
    expect(pacer.totals()).toEqual({ sent: total, skipped: 0 });
  });

  it('gives up on a backlog beyond maxBacklog instead of bursting forever', () => {
    const pacer = new Pacer(1_000, 100, 500);
    expect(pacer.take(10_000)).toBe(100); // 10,000 due: 100 sent, 500 kept as backlog, the rest skipped
    expect(pacer.totals()).toEqual({ sent: 100, skipped: 9_400 });
    let sent = 0;
    for (let i = 0; i < 5; i++) sent += pacer.take(10_000);
    expect(sent).toBe(500);
    expect(pacer.take(10_000)).toBe(0);
  });
});
