/**
 * The service's figures over a benchmark's runs. Pure, so a unit test can hold it.
 *
 * A run whose workers did not join the consumer group together is a different
 * measurement: the first worker takes every partition and counts, the second joins,
 * partitions move, and their new owner replays what the first had read (140,000 to
 * 195,000 events of 2,000,000 on a 2-core machine, 10 to 25% slower and 10 to 20% more
 * CPU per event). The local stack's broker starts a new group without waiting
 * (group.initial.rebalance.delay.ms=0, for fast tests; Kafka's default waits 3 s), so
 * some runs race and some do not, and a median over a mix compared builds by how many
 * of their runs raced. The rates and CPU are therefore taken over the runs without
 * replay (steady runs) when there is one, and the raced runs are counted apart.
 */
import { median, min } from '../lib.js';
import type { ServiceRun } from './service.js';

export interface ServiceSummary {
  rate: number;
  min: number;
  peakRssMb: number;
  startupMs: number;
  cpuUsPerEvent: number;
  /** The supervisor's part of cpuUsPerEvent (median, same runs); 0 for a service run as one process. */
  supervisorCpuUsPerEvent: number;
  /** The supervisor's own peak RSS, the most of any run. */
  supervisorPeakRssMb: number;
  /** Runs without replay, which the figures are taken over; 0: every run replayed, and the figures are over all of them. */
  steadyRuns: number;
  /** Runs in which a partition moved between workers and was replayed (the join race). */
  racedRuns: number;
  /** The most events any run replayed. */
  maxReplayed: number;
}

/** Medians over the steady runs (all runs if none is); the rate also as its minimum; peak RSS over every run. */
export function summarise(runs: readonly ServiceRun[]): ServiceSummary {
  const raced = runs.filter((r) => r.replayed > 0);
  const steady = runs.filter((r) => r.replayed === 0);
  const counted = steady.length > 0 ? steady : runs;
  const finite = (xs: number[]) => xs.filter((x) => Number.isFinite(x));
  const rates = finite(counted.map((r) => r.eventsPerS));
  const rss = finite(runs.map((r) => r.peakRssMb));
  const startup = finite(counted.map((r) => r.startupMs));
  const cpu = finite(counted.map((r) => r.cpuUsPerEvent));
  const supervisorCpu = finite(counted.map((r) => r.supervisorCpuUsPerEvent));
  const supervisorRss = finite(runs.map((r) => r.supervisorPeakRssMb));
  return {
    rate: rates.length > 0 ? median(rates) : 0,
    min: rates.length > 0 ? min(rates) : 0,
    peakRssMb: rss.length > 0 ? Math.max(...rss) : Number.NaN,
    startupMs: startup.length > 0 ? median(startup) : Number.NaN,
    cpuUsPerEvent: cpu.length > 0 ? median(cpu) : Number.NaN,
    supervisorCpuUsPerEvent: supervisorCpu.length > 0 ? median(supervisorCpu) : Number.NaN,
    supervisorPeakRssMb: supervisorRss.length > 0 ? Math.max(...supervisorRss) : Number.NaN,
    steadyRuns: steady.length,
    racedRuns: raced.length,
    maxReplayed: runs.reduce((m, r) => Math.max(m, r.replayed), 0),
  };
}
