import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serviceNodeFlags } from '../../scripts/run/node-flags.mjs';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface RunningProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  exited: Promise<number | string>;
}

/**
 * The node arguments that start a built service, relative to REPO_ROOT: its node flags
 * (scripts/run/node-flags.mjs, as every launcher reads them) and its entry point.
 */
export function serviceNodeArgs(service: string): string[] {
  return [...serviceNodeFlags(service), `services/${service}/dist/main.js`];
}

/** Starts a built service (`npm run build` first) as a real process. */
export function spawnService(service: 'ingest' | 'aggregator' | 'enforcer' | 'control', env: Record<string, string>): RunningProcess {
  const child = spawn(process.execPath, serviceNodeArgs(service), {
    cwd: REPO_ROOT,
    // Only what the test gives, plus PATH: the service must not lean on the caller's environment.
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out, exited: exitOf(child) };
}

/**
 * Resolves with the exit code (or the signal name) once the process has ended and its
 * pipes are drained: 'exit' can come first, and a test may read the last line printed.
 * A process still holding the pipes (a worker left behind) holds this 1 s at most.
 */
export function exitOf(child: ChildProcess): Promise<number | string> {
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      const result = code ?? signal ?? 'unknown';
      const bound = setTimeout(() => resolve(result), 1_000);
      child.once('close', () => {
        clearTimeout(bound);
        resolve(result);
      });
    }),
  );
}

/** For a timeout message: whether the process is still running, and what it printed. */
export function describeProcess(proc: RunningProcess): string {
  const ended = proc.child.exitCode ?? proc.child.signalCode;
  return `${ended === null ? 'still running' : `exited with ${ended}`}; output:\n${proc.output()}`;
}

// Ports for test processes come from below the kernel's ephemeral range (32768–60999
// by default). A port taken from that range and released can be auto-bound by any
// outgoing connection (a Kafka client, say) before the service listens on it, which
// then fails with EADDRINUSE: seen once in CI, in `npm start`'s test. Each process
// walks its own stretch from a random start and never hands out a port twice.
// BANSTREAM_TEST_PORTS=LOW-HIGH confines them to a range of the caller's (runs sharing a machine).
const [PORT_LOW, PORT_HIGH] = portRange(process.env.BANSTREAM_TEST_PORTS);
let nextPort = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW));

function portRange(raw: string | undefined): [number, number] {
  if (raw === undefined || raw === '') return [20_000, ephemeralLow() - 1];
  const m = /^(\d+)-(\d+)$/.exec(raw.trim());
  const [low, high] = m ? [Number(m[1]), Number(m[2])] : [Number.NaN, Number.NaN];
  if (!(low >= 1024 && high <= 65535 && low < high)) throw new Error(`BANSTREAM_TEST_PORTS: expected LOW-HIGH, ports from 1024 to 65535 (got ${JSON.stringify(raw)})`);
  return [low, high];
}

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > PORT_LOW + 1000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** A TCP port on 127.0.0.1 that is free now and that no outgoing connection will take. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < PORT_HIGH - PORT_LOW; tries++) {
    const port = nextPort;
    nextPort = nextPort >= PORT_HIGH ? PORT_LOW : nextPort + 1;
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port from ${PORT_LOW} to ${PORT_HIGH}`);
}

/** `count` consecutive free ports (a Kafka cluster's brokers or controllers); the first is returned. */
export async function freePortBlock(count: number): Promise<number> {
  for (let tries = 0; tries < PORT_HIGH - PORT_LOW; tries++) {
    const first = nextPort;
    if (first + count - 1 > PORT_HIGH) {
      nextPort = PORT_LOW;
      continue;
    }
    nextPort = first + count > PORT_HIGH ? PORT_LOW : first + count;
    let free = true;
    for (let p = first; free && p < first + count; p++) free = await canListen(p);
    if (free) return first;
  }
  throw new Error(`no ${count} consecutive free ports from ${PORT_LOW} to ${PORT_HIGH}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Resolves with the exit result, or rejects when the process outlives the bound. */
export async function exitWithin(proc: RunningProcess, ms: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      proc.exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`process did not exit within ${ms} ms; output:\n${proc.output()}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Running (a zombie waiting to be reaped counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
}
