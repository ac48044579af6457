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
 * round just before it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { credentials, type Client } from '@grpc/grpc-js';
import { authorizationService } from '../../services/enforcer/src/grpc/protos.js';
import type { CheckRequest } from '../../services/enforcer/src/grpc/messages.js';
import { median, note } from '../lib.js';
import { freePort, serviceNodeArgs, waitReady } from '../aggregator/service.js';
import { echoClient, ECHO_SERVER } from './grpc-echo.js';

const DURATION_MS = 2000;
const WARMUP_MS = 2000;
const ROUNDS = 7;
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

/** Calls completed in `ms`, IN_FLIGHT at a time; any failed call fails the benchmark. */
function drive(call: Call, ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const until = Date.now() + ms;
    let completed = 0;
    let running = 0;
    let failed = false;
    const next = (): void => {
      if (failed) return;
      if (Date.now() >= until) {
        if (--running === 0) resolve(completed);
        return;
      }
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
}

export async function measureGrpc(env: Record<string, string>): Promise<GrpcFigures> {
  const [httpPort, grpcPort, echoPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const children: ChildProcess[] = [];
  const clients: Client[] = [];
  try {
    children.push(
      spawn(process.execPath, serviceNodeArgs('enforcer'), {
        env: { PATH: process.env.PATH ?? '', ...env, HTTP_PORT: String(httpPort), ENFORCER_GRPC_PORT: String(grpcPort), LOG_LEVEL: 'warn' },
        stdio: 'inherit',
      }),
      spawn(process.execPath, ['--input-type=module', '-e', ECHO_SERVER], { env: { PATH: process.env.PATH ?? '', PORT: String(echoPort) }, stdio: 'inherit' }),
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
    note(`grpc: ${IN_FLIGHT} calls in flight on one connection, CheckRequest ${size} bytes; ${WARMUP_MS / 1000} s warm-up each, then ${ROUNDS} rounds of ${DURATION_MS / 1000} s (echo, check)`);
    for (const name of ['echo', 'check'] as const) await drive(calls[name], WARMUP_MS);
    const rounds = { echo: [] as number[], check: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ['echo', 'check'] as const) rounds[name].push((await drive(calls[name], DURATION_MS)) / (DURATION_MS / 1000));
      note(`grpc round ${round + 1}: echo ${Math.round(rounds.echo[round]!)}/s, check ${Math.round(rounds.check[round]!)}/s`);
    }
    const ratios = rounds.check.map((c, i) => c / rounds.echo[i]!);
    return {
      grpc_checks_per_s: Math.round(median(rounds.check)),
      grpc_echo_per_s: Math.round(median(rounds.echo)),
      grpc_ratio: Number(median(ratios).toFixed(3)),
      grpc_ratio_min: Number(Math.min(...ratios).toFixed(3)),
      grpc_message_bytes: size,
    };
  } finally {
    for (const c of clients) c.close();
    for (const c of children) c.kill('SIGTERM');
  }
}
