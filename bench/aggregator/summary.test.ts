import { describe, expect, it } from 'vitest';
import type { ServiceRun } from './service.js';
import { summarise } from './summary.js';

const run = (eventsPerS: number, cpuUsPerEvent: number, replayed: number, peakRssMb = 700): ServiceRun => ({
  eventsPerS,
  reached: 2_000_000,
  timedOut: false,
  peakRssMb,
  startupMs: 1_500,
  cpuUsPerEvent,
  supervisorCpuUsPerEvent: cpuUsPerEvent / 20,
  supervisorPeakRssMb: peakRssMb / 8,
  replayed,
  exit: 0,
});

describe('the aggregator benchmark summary', () => {
  it('takes rates and CPU over the runs without replay, and counts the raced ones apart', () => {
    const s = summarise([run(500_000, 2.9, 180_000), run(640_000, 2.4, 0), run(620_000, 2.5, 0, 720)]);
    expect(s).toMatchObject({ rate: 630_000, min: 620_000, cpuUsPerEvent: 2.45, supervisorCpuUsPerEvent: 0.1225, steadyRuns: 2, racedRuns: 1, maxReplayed: 180_000 });
    // Memory is the worst of every run, raced ones included.
    expect(s.peakRssMb).toBe(720);
    expect(s.supervisorPeakRssMb).toBe(90);
  });

  it('uses every run when each one raced, and says so', () => {
    const s = summarise([run(500_000, 2.9, 180_000), run(520_000, 2.8, 150_000)]);
    expect(s).toMatchObject({ rate: 510_000, steadyRuns: 0, racedRuns: 2, maxReplayed: 180_000 });
  });
});
