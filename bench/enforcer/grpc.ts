/**
 * gRPC ext_authz checks per second (envoy.service.auth.v3.Authorization/Check, the
 * sidecar with ENFORCER_GRPC_PORT) against a bare grpc-js unary echo server measured
 * the same way in the same run: what grpc-js on this machine allows for one call
 * carrying a message of the same size (the echo answers with the bytes it was sent,
 * decoded and encoded as a one-field protobuf message). Each server is its own
 * process; one grpc-js client in this process keeps IN_FLIGHT calls going on one
 * HTTP/2 connection, as Envoy's ext_authz filter does. After a warm-up the servers
 * take turns for ROUNDS short rounds, so a drift of the shared machine falls on both;
 * the ratio is the median of the rounds' own ratios (each check round over the echo
 * round just before it). The servers' CPU per call is read from /proc around each round:
 * on a shared machine the rates follow whatever else runs, and the client's share of
 * the cores as much as the servers', while CPU per call is the servers' own work.
 * BENCH_GRPC_NODE_ARGS go to the sidecar's node before its own flags (--cpu-prof, say).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { credentials, type Client } from '@grpc/grpc-js';
import { authorizationService } from '../../services/enforcer/src/grpc/protos.js';
import type { CheckRequest } from '../../services/enforcer/src/grpc/messages.js';
import { CHILD_STDIO, cpuMicros, median, note } from '../lib.js';
import { freePort, serviceNodeArgs, waitReady } from '../aggregator/service.js';
import { echoClient, ECHO_SERVER } from './grpc-echo.js';

const DURATION_MS = 2000;
/** Calls each server answers before the rounds: by count, not time, so a loaded machine still warms up the JIT. */
const WARMUP_CALLS = 20_000;
const ROUNDS = 7;
const IDLE_MS = 3000;
const IN_FLIGHT = 64;

/** A CheckRequest as Envoy sends one for a browser's GET: the pseudo-headers and a handful of others. */
export const BENCH_CHECK: CheckRequest = {
  attributes: {
    source: { address: { socket_address: { address: '203.0.113.7', port_value: 51234 } } },
    request: {
      http: {
        method: 'GET',
        path: '/api/items?page=2',
        host: 'shop.example',
        headers: {
          ':authority': 'shop.example',
          ':method': 'GET',
          ':path': '/api/items?page=2',
          ':scheme': 'https',
          accept: 'application/json',
          'accept-encoding': 'gzip, br',
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
          'x-forwarded-proto': 'https',
          'x-request-id': '4f0c7a8e-1b2d-4c3e-9f5a-6b7c8d9e0f1a',
        },
      },
    },
  },
};

type Call = (done: (error: Error | null) => void) => void;

/** Calls completed in `ms` (or `ms` elapsed for `count` calls), IN_FLIGHT at a time; any failed call fails the benchmark. */
function drive(call: Call, ms: number, count = Number.POSITIVE_INFINITY): Promise<number> {
  return new Promise((resolve, reject) => {
    const until = Date.now() + ms;
    let completed = 0;
    let started = 0;
    let running = 0;
    let failed = false;
    const next = (): void => {
      if (failed) return;
      if (Date.now() >= until || started >= count) {
        if (--running === 0) resolve(completed);
        return;
      }
      started++;
      call((error) => {
        if (error) {
          failed = true;
          reject(error);
          return;
        }
        completed++;
        next();
      });
    };
    for (let i = 0; i < IN_FLIGHT; i++) {
      running++;
      next();
    }
  });
}

export interface GrpcFigures {
  grpc_checks_per_s: number;
  grpc_echo_per_s: number;
  grpc_ratio: number;
  /** The lowest of the rounds' own ratios. */
  grpc_ratio_min: number;
  grpc_message_bytes: number;
  /** Server CPU per call (µs, medians over the rounds), net of the process's idle CPU: steadier than rates on a shared machine. */
  grpc_check_cpu_us_per_call: number;
  grpc_echo_cpu_us_per_call: number;
  /** Echo CPU per call over check CPU per call: the ratio the servers' own work allows, whatever the client gets. */
  grpc_cpu_ratio: number;
}

export async function measureGrpc(env: Record<string, string>): Promise<GrpcFigures> {
  const [httpPort, grpcPort, echoPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const children: ChildProcess[] = [];
  const clients: Client[] = [];
  try {
    children.push(
      spawn(process.execPath, [...(process.env.BENCH_GRPC_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...serviceNodeArgs('enforcer')], {
        env: { PATH: process.env.PATH ?? '', ...env, HTTP_PORT: String(httpPort), ENFORCER_GRPC_PORT: String(grpcPort), LOG_LEVEL: 'warn' },
        stdio: CHILD_STDIO,
      }),
      spawn(process.execPath, ['--input-type=module', '-e', ECHO_SERVER], { env: { PATH: process.env.PATH ?? '', PORT: String(echoPort) }, stdio: CHILD_STDIO }),
    );
    await waitReady(`http://127.0.0.1:${httpPort}/readyz`);
    const { Client, service } = authorizationService();
    const checker = new Client(`127.0.0.1:${grpcPort}`, credentials.createInsecure()) as unknown as Client & {
      Check(r: CheckRequest, cb: (e: Error | null, r: { status?: { code?: number } }) => void): void;
    };
    clients.push(checker);
    const size = service.Check!.requestSerialize(BENCH_CHECK).length;
    const echo = echoClient(`127.0.0.1:${echoPort}`);
    clients.push(echo.client);
    const payload = randomBytes(Math.max(0, size - 3)); // tag and length: a message of `size` bytes
    const calls: Record<'check' | 'echo', Call> = {
      check: (done) => checker.Check(BENCH_CHECK, (e, r) => done(e ?? ((r.status?.code ?? 0) === 0 ? null : new Error(`check denied: ${JSON.stringify(r)}`)))),
      echo: (done) => echo.call(payload, done),
    };
    await echo.ready();
    note(`grpc: ${IN_FLIGHT} calls in flight on one connection, CheckRequest ${size} bytes; ${WARMUP_CALLS} calls each to warm up, then ${ROUNDS} rounds of ${DURATION_MS / 1000} s (echo, check)`);
    for (const name of ['echo', 'check'] as const) await drive(calls[name], 120_000, WARMUP_CALLS);
    const rounds = { echo: [] as number[], check: [] as number[] };
    const cpu = { echo: [] as number[], check: [] as number[] };
    const pids = { check: children[0]!.pid!, echo: children[1]!.pid! };
    // What each process spends with no calls (the sidecar tails its topics): taken off each round's CPU.
    const idleBefore = { check: cpuMicros(pids.check), echo: cpuMicros(pids.echo) };
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idlePerMs = { check: (cpuMicros(pids.check) - idleBefore.check) / IDLE_MS, echo: (cpuMicros(pids.echo) - idleBefore.echo) / IDLE_MS };
    note(`grpc: idle CPU ${Math.round(idlePerMs.check * 1000)} µs/s (sidecar), ${Math.round(idlePerMs.echo * 1000)} µs/s (echo)`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ['echo', 'check'] as const) {
        const before = cpuMicros(pids[name]);
        const started = Date.now();
        const completed = await drive(calls[name], DURATION_MS);
        rounds[name].push(completed / (DURATION_MS / 1000));
        cpu[name].push(Math.max(0, cpuMicros(pids[name]) - before - idlePerMs[name] * (Date.now() - started)) / completed);
      }
      note(
        `grpc round ${round + 1}: echo ${Math.round(rounds.echo[round]!)}/s (${Math.round(cpu.echo[round]!)} µs CPU each), check ${Math.round(rounds.check[round]!)}/s (${Math.round(cpu.check[round]!)} µs CPU each)`,
      );
    }
    const ratios = rounds.check.map((c, i) => c / rounds.echo[i]!);
    return {
      grpc_checks_per_s: Math.round(median(rounds.check)),
      grpc_echo_per_s: Math.round(median(rounds.echo)),
      grpc_ratio: Number(median(ratios).toFixed(3)),
      grpc_ratio_min: Number(Math.min(...ratios).toFixed(3)),
      grpc_message_bytes: size,
      grpc_check_cpu_us_per_call: Math.round(median(cpu.check)),
      grpc_echo_cpu_us_per_call: Math.round(median(cpu.echo)),
      grpc_cpu_ratio: Number(median(cpu.check.map((c, i) => cpu.echo[i]! / c)).toFixed(3)),
    };
  } finally {
    for (const c of clients) c.close();
    for (const c of children) c.kill('SIGTERM');
  }
}
