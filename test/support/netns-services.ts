import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import type { NetnsLab } from './netns.js';
import { sumMetric } from './aggregator.js';
import { waitUntil } from './infra.js';
import { describeProcess, exitWithin, serviceNodeArgs, type RunningProcess } from './processes.js';

/** Inside its own namespace every service has the address to itself: one port for all (the brief's range). */
export const SERVICE_PORT = 39120;
export const REDIS_PORT = 39110;

export interface NetnsService {
  proc: RunningProcess;
  url: string;
  /** The sum of a metric over its series (only those whose line includes `having`). */
  metric(name: string, having?: string): Promise<number>;
  stop(): Promise<void>;
}

/** Starts a built service (`npm run build`) inside node `name`'s namespace, serving on its address; waits for /readyz. */
export async function startServiceIn(lab: NetnsLab, name: string, service: 'ingest' | 'aggregator' | 'enforcer', env: Record<string, string>): Promise<NetnsService> {
  const host = lab.address(name);
  const proc = lab.spawn(name, process.execPath, serviceNodeArgs(service), { env: { LOG_LEVEL: 'warn', ...env, HTTP_HOST: host, HTTP_PORT: String(SERVICE_PORT) } });
  const url = `http://${host}:${SERVICE_PORT}`;
  await waitUntil(
    async () => {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) return 'exited';
      return (await fetch(`${url}/readyz`)).status === 200;
    },
    () => `${service} in ${name} to be ready (${describeProcess(proc)})`,
    120_000,
    100,
  ).then(async (state) => {
    // 'exit' comes before the pipes are drained: read what it printed (its "start failed" line) first.
    if (state === 'exited') throw new Error(`${service} in ${name} exited before it was ready (${describeProcess(await drained(proc))})`);
  });
  return {
    proc,
    url,
    async metric(metric, having) {
      // Once more on a network error: a kept-alive connection the server closed just then (EPIPE).
      const scrape = async () => (await fetch(`${url}/metrics`)).text();
      const text = await scrape().catch(async (error: Error) => {
        if (proc.child.exitCode !== null || proc.child.signalCode !== null) throw new Error(`${service} in ${name} has exited (${describeProcess(proc)})`, { cause: error });
        return scrape();
      });
      return sumMetric(text, metric, having);
    },
    async stop() {
      proc.child.kill('SIGTERM');
      await exitWithin(proc, 15_000).catch(() => proc.child.kill('SIGKILL'));
    },
  };
}

/** The process once its output pipes have closed (2 s at most: a child it left may hold them). */
function drained(proc: RunningProcess): Promise<RunningProcess> {
  if (proc.child.stdout?.closed !== false && proc.child.stderr?.closed !== false) return Promise.resolve(proc);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(proc), 2_000);
    proc.child.once('close', () => {
      clearTimeout(timer);
      resolve(proc);
    });
  });
}

/** A redis-server without persistence inside node `name`'s namespace; resolves with its URL once it answers. */
export async function startRedisIn(lab: NetnsLab, name: string, dir: string): Promise<{ url: string; proc: RunningProcess }> {
  mkdirSync(dir, { recursive: true });
  const host = lab.address(name);
  const proc = lab.spawn(name, 'redis-server', ['--port', String(REDIS_PORT), '--bind', host, '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--protected-mode', 'no']);
  await waitUntil(
    () => answersPing(host, REDIS_PORT),
    () => `redis-server in ${name} (${describeProcess(proc)})`,
    10_000,
    20,
  );
  return { url: `redis://${host}:${REDIS_PORT}`, proc };
}

function answersPing(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}
