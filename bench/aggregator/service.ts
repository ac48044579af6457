/**
 * Runs the built aggregator as its own process and times it through its Prometheus
 * endpoint: the events-consumed counter is sampled every POLL_MS.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { note } from '../lib.js';

/** The test harness's own: the benchmarks start services the same way. */
export { freePort, serviceNodeArgs } from '../../test/support/processes.js';

export const CONSUMED_METRIC = 'banstream_aggregator_events_consumed_total';
/** Only events counted live: a partition that moves between workers is replayed by its new owner, and counted again as replay. */
const LIVE = 'replay="false"';
const REPLAY = 'replay="true"';
const POLL_MS = 50;

export interface ServiceRun {
  /** Counted events per second, see `timeService`. */
  eventsPerS: number;
  /** The counter's last value (the total when the run completed). */
  reached: number;
  /** The counter did not reach the total: it stalled, the process died or the timeout passed. */
  timedOut: boolean;
  /** Why a run ended early, when it did. */
  failure?: string;
  /** VmHWM of the process just before it was stopped, MiB; NaN when unreadable. */
  peakRssMb: number;
  /** ms from spawn to the first non-zero sample. */
  startupMs: number;
  /** CPU time of the process (all threads, user + system) per counted event, µs; NaN when unreadable. */
  cpuUsPerEvent: number;
  /**
   * The part of cpuUsPerEvent spent by the supervisor process alone (serving /metrics,
   * which the benchmark samples every POLL_MS, by asking its workers); 0 when the
   * service ran as one process.
   */
  supervisorCpuUsPerEvent: number;
  /** The supervisor's own VmHWM, MiB (part of peakRssMb); 0 when the service ran as one process. */
  supervisorPeakRssMb: number;
  /** Events counted again by a partition's new owner (a rebalance), by the end of the run: work on top of the total. */
  replayed: number;
  exit: number | string;
}

export interface ServiceOptions {
  repoRoot: string;
  /** Node flags and the service's entry point, relative to repoRoot (or absolute). */
  nodeArgs: string[];
  env: Record<string, string>;
  total: number;
  timeoutMs: number;
  /** A counter that stays below the total and unchanged this long ends the run. */
  stallMs: number;
  /** A counter still at zero (or absent) this long after the spawn ends the run. */
  startMs: number;
}

/**
 * Sum of every label set of `name` in a Prometheus text exposition (only lines that
 * contain `having`, when given); undefined when absent.
 */
export function metricSum(text: string, name: string, having?: string): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.charCodeAt(name.length);
    if (rest !== 0x7b /* { */ && rest !== 0x20 /* space */) continue;
    if (having !== undefined && !line.includes(having)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum = (sum ?? 0) + value;
  }
  return sum;
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces); undefined once the process is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  } catch {
    return undefined;
  }
}

/** `pid` and every process descended from it (a supervisor's workers). */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const child = Number(entry);
    if (!Number.isInteger(child)) continue;
    const parent = Number(statFields(child)?.[1]);
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent)!.push(child);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

/**
 * `read` summed over a process and its descendants, and the process's own value when it
 * has descendants (a supervisor; else 0); NaN when the process itself is unreadable.
 */
function overTree(pid: number | undefined, read: (p: number) => number | undefined): { all: number; supervisor: number } {
  if (pid === undefined) return { all: Number.NaN, supervisor: Number.NaN };
  const tree = processTree(pid);
  let all = 0;
  let supervisor = 0;
  for (const p of tree) {
    const value = read(p);
    if (value === undefined) {
      if (p === pid) return { all: Number.NaN, supervisor: Number.NaN };
      continue;
    }
    all += value;
    if (p === pid && tree.length > 1) supervisor = value;
  }
  return { all, supervisor };
}

/** User + system CPU time so far (ms, clock ticks of 10 ms) of the service's processes. */
function cpuMs(pid: number | undefined): { all: number; supervisor: number } {
  return overTree(pid, (p) => {
    const fields = statFields(p);
    // utime and stime are the 12th and 13th fields after the command name.
    return fields === undefined ? undefined : (Number(fields[11]) + Number(fields[12])) * 10;
  });
}

/** Peak resident size (VmHWM, MiB) of the service's processes. */
function peakRssMb(pid: number | undefined): { all: number; supervisor: number } {
  return overTree(pid, (p) => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : 0;
    } catch {
      return undefined;
    }
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Spawns the service (`node <nodeArgs>`) and samples the counter. The rate is
 * measured between two samples, so the polling interval does not blur its start: from
 * the first sample above zero (count c0 at t0) to the first sample at the total (t1),
 * events/s = (total − c0) / (t1 − t0). A run that does not get there reports the rate
 * up to the counter's last increase instead, with `timedOut`.
 */
export async function timeService(options: ServiceOptions): Promise<ServiceRun> {
  const port = Number(options.env.HTTP_PORT);
  const child = spawn(process.execPath, options.nodeArgs, {
    cwd: options.repoRoot,
    // BENCH_AGG_NODE_OPTIONS: development only, NODE_OPTIONS for the service's processes (e.g. `--trace-gc`). Node 20 refuses
    // `--cpu-prof` there: to profile, add it to the measured build's `banstream.nodeFlags` (the workers inherit the supervisor's flags).
    env: { PATH: process.env.PATH ?? '', ...options.env, ...(process.env.BENCH_AGG_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_AGG_NODE_OPTIONS } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (d: Buffer) => {
    output += d.toString();
    if (output.length > 64_000) output = output.slice(-32_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exit: number | string | undefined;
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve((exit = code ?? signal ?? 'unknown'))));

  const spawnedAt = performance.now();
  let first: { t: number; count: number; cpu: { all: number; supervisor: number } } | undefined;
  let last = { t: 0, count: 0 };
  let sampled = false;
  let lastIncrease = { t: 0, count: 0 };
  let done: { t: number; cpu: { all: number; supervisor: number } } | undefined;
  let replayed = 0;
  let failure: string | undefined;
  while (true) {
    const now = performance.now();
    if (exit !== undefined) {
      failure = `aggregator exited (${exit}) before reaching the total`;
      break;
    }
    if (now - spawnedAt > options.timeoutMs) {
      failure = `timeout after ${options.timeoutMs} ms`;
      break;
    }
    if (first === undefined && now - spawnedAt > options.startMs) {
      failure = sampled ? `${CONSUMED_METRIC} still 0 ${options.startMs} ms after the start` : `no ${CONSUMED_METRIC} on /metrics (or no answer) within ${options.startMs} ms of the start`;
      break;
    }
    if (first !== undefined && now - lastIncrease.t > options.stallMs) {
      failure = `counter stalled at ${last.count} for ${options.stallMs} ms`;
      break;
    }
    let count: number | undefined;
    try {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) {
        const text = await response.text();
        count = metricSum(text, CONSUMED_METRIC, LIVE);
        replayed = metricSum(text, CONSUMED_METRIC, REPLAY) ?? 0;
      }
    } catch {
      // Not listening yet, or busy: sample again.
    }
    const t = performance.now();
    if (count !== undefined) {
      sampled = true;
      if (count > 0 && first === undefined) first = { t, count, cpu: cpuMs(child.pid) };
      if (count > last.count) lastIncrease = { t, count };
      last = { t, count };
      if (count >= options.total) {
        done = { t, cpu: cpuMs(child.pid) };
        break;
      }
    }
    await sleep(Math.max(0, POLL_MS - (performance.now() - now)));
  }

  if (failure !== undefined && exit === undefined) {
    // What the service says about the events it did not count (late, dead-lettered, …).
    try {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
      const totals = text.split('\n').filter((l) => /^banstream_aggregator_\w+_total[ {]/.test(l));
      note(`aggregator counters at the end:\n${totals.join('\n')}`);
    } catch {
      // Diagnostics only.
    }
  }
  const rss = peakRssMb(child.pid);
  if (exit === undefined) child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<string>((resolve) => (timer = setTimeout(() => resolve('kill'), 20_000)))]);
  clearTimeout(timer);
  if (code === 'kill') {
    note('aggregator did not stop within 20 s of SIGTERM: SIGKILL');
    child.kill('SIGKILL');
    await exited;
  }
  if (failure !== undefined) note(`aggregator run: ${failure}; last output:\n${output.slice(-4_000)}`);

  let eventsPerS = 0;
  if (first !== undefined) {
    const end = done ?? lastIncrease;
    const counted = (done ? options.total : lastIncrease.count) - first.count;
    eventsPerS = end.t > first.t ? (counted / (end.t - first.t)) * 1000 : Number.NaN;
  }
  return {
    eventsPerS,
    reached: last.count,
    timedOut: done === undefined,
    ...(failure === undefined ? {} : { failure }),
    peakRssMb: rss.all,
    supervisorPeakRssMb: rss.supervisor,
    startupMs: first === undefined ? Number.NaN : first.t - spawnedAt,
    cpuUsPerEvent: first !== undefined && done !== undefined ? ((done.cpu.all - first.cpu.all) * 1000) / (options.total - first.count) : Number.NaN,
    supervisorCpuUsPerEvent: first !== undefined && done !== undefined ? ((done.cpu.supervisor - first.cpu.supervisor) * 1000) / (options.total - first.count) : Number.NaN,
    replayed,
    exit: exit ?? 'unknown',
  };
}

/** Polls a service's /readyz (or any URL) until it answers 200; fails after 60 s. */
export async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(url).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not ready after 60 s`);
}
