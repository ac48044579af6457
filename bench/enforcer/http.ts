/**
 * Sidecar HTTP checks per second (POST /v1/check, keep-alive connections) against a
 * Fastify hello-world measured the same way in the same run: what HTTP on this
 * machine allows. Each server runs as its own process; autocannon drives them from
 * this one. Each server is warmed up, then they take turns for ROUNDS short rounds,
 * so a drift of the shared machine falls on all: on this VM the hello-world alone moved
 * between 31,000 and 36,000/s within minutes (and to 12,000–17,000/s on another day), and
 * 5 s rounds left that drift in the ratio. A ratio is the median of the rounds' own
 * ratios (each sidecar round over the hello-world round just before it).
 *
 * Two sidecars are measured: as shipped, answers batched per event-loop turn
 * (ENFORCER_BATCH_ANSWERS, services/enforcer/src/http/answer-batch.ts), and with each
 * answer written as soon as it is decided, as the hello-world does (`http_unbatched_*`),
 * so the figures show what the batching does and what the check itself costs. The same
 * batching lifts a hello-world too: one that batches is measured as a second ceiling
 * (`http_batched_ceiling_per_s`, `http_ratio_to_batched_ceiling`), the like-for-like
 * comparison for the sidecar as shipped. What the
 * batching costs in latency: autocannon's mean and p99 at the full load (whole ms), and
 * LIGHT_ROUNDS rounds taking turns of LIGHT_REQUESTS requests one at a time on one
 * keep-alive connection, timed here in µs (medians over the rounds; the first requests
 * of a cold server take longer, so the servers alternate and each round warms up).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import autocannon from 'autocannon';
import { CHILD_STDIO, median, note } from '../lib.js';
import { freePort, serviceNodeArgs } from '../aggregator/service.js';

const DURATION_S = 2;
const WARMUP_S = 2;
const ROUNDS = 9;
const CONNECTIONS = 32;
const LIGHT_REQUESTS = 1000;
const LIGHT_ROUNDS = 4;

// With BATCH=1, answers are batched per event-loop turn by the sidecar's own AnswerBatch (built by `tsc -b services/enforcer`).
const ANSWER_BATCH_MODULE = new URL('../../services/enforcer/dist/http/answer-batch.js', import.meta.url).href;
const HELLO = `
import Fastify from 'fastify';
import { AnswerBatch } from '${ANSWER_BATCH_MODULE}';
const app = Fastify({ logger: false });
const answers = process.env.BATCH === '1' ? new AnswerBatch() : undefined;
app.post('/v1/check', async () => {
  const held = answers?.turn();
  if (held) await held;
  return { allowed: true, status: 200, source: 'none', reason: 'hello' };
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
`;

export async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(url).then(
        (r) => r.status < 500,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not ready after 60 s`);
}

interface Round {
  perS: number;
  meanMs: number;
  p99Ms: number;
}

function load(url: string, body: string, durationS = DURATION_S): Promise<Round> {
  return new Promise((resolve, reject) => {
    autocannon({ url, method: 'POST', body, headers: { 'content-type': 'application/json' }, connections: CONNECTIONS, duration: durationS }, (err, result) => {
      if (err) reject(err);
      else if (result.non2xx > 0 || result.errors > 0) reject(new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`));
      else resolve({ perS: result.requests.average, meanMs: result.latency.average, p99Ms: result.latency.p99 });
    });
  });
}

/** p50 and p99 in µs of requests sent one at a time (after 200 unrecorded ones) on one keep-alive connection. */
interface LightRound {
  p50Us: number;
  p99Us: number;
}

async function lightLoadLatency(url: string, body: string): Promise<LightRound> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const once = () =>
    new Promise<number>((resolve, reject) => {
      const started = process.hrtime.bigint();
      const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - started) / 1000) : reject(new Error(`${url}: ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  try {
    for (let i = 0; i < 200; i++) await once();
    const times: number[] = [];
    for (let i = 0; i < LIGHT_REQUESTS; i++) times.push(await once());
    times.sort((a, b) => a - b);
    return { p50Us: Math.round(times[Math.floor(times.length * 0.5)]!), p99Us: Math.round(times[Math.floor(times.length * 0.99)]!) };
  } finally {
    agent.destroy();
  }
}

/** Medians over the rounds: rate, latencies, and the rounds' own ratios to the hello-world. */
function summary(rounds: readonly Round[], ceilings: readonly Round[]) {
  const ratios = rounds.map((r, i) => r.perS / ceilings[i]!.perS);
  return {
    perS: Math.round(median(rounds.map((r) => r.perS))),
    ratio: Number(median(ratios).toFixed(3)),
    ratioMin: Number(Math.min(...ratios).toFixed(3)),
    meanMs: median(rounds.map((r) => r.meanMs)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
  };
}

export interface HttpFigures {
  http_checks_per_s: number;
  http_ceiling_per_s: number;
  http_ratio: number;
  /** The lowest of the rounds' own ratios (sidecar over the hello-world just before it). */
  http_ratio_min: number;
  http_latency_mean_ms: number;
  http_latency_p99_ms: number;
  http_ceiling_latency_mean_ms: number;
  http_ceiling_latency_p99_ms: number;
  /** A hello-world batching its answers as the sidecar does. */
  http_batched_ceiling_per_s: number;
  http_ratio_to_batched_ceiling: number;
  /** The sidecar with ENFORCER_BATCH_ANSWERS=false. */
  http_unbatched_checks_per_s: number;
  http_unbatched_ratio: number;
  http_unbatched_latency_mean_ms: number;
  http_unbatched_latency_p99_ms: number;
  /** One request at a time. */
  http_light_load_p50_us: number;
  http_light_load_p99_us: number;
  http_unbatched_light_load_p50_us: number;
  http_unbatched_light_load_p99_us: number;
}

export async function measureHttp(env: Record<string, string>): Promise<HttpFigures> {
  const [sidecarPort, unbatchedPort, helloPort, batchedHelloPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const children: ChildProcess[] = [];
  const sidecar = (port: number, batch: boolean) =>
    spawn(process.execPath, serviceNodeArgs('enforcer'), {
      env: { PATH: process.env.PATH ?? '', ...env, HTTP_PORT: String(port), LOG_LEVEL: 'warn', ENFORCER_BATCH_ANSWERS: String(batch) },
      stdio: CHILD_STDIO,
    });
  try {
    children.push(sidecar(sidecarPort, true), sidecar(unbatchedPort, false));
    const helloWorld = (port: number, batch: boolean) =>
      spawn(process.execPath, ['--input-type=module', '-e', HELLO], { env: { PATH: process.env.PATH ?? '', PORT: String(port), BATCH: batch ? '1' : '0' }, stdio: CHILD_STDIO });
    children.push(helloWorld(helloPort, false), helloWorld(batchedHelloPort, true));
    await waitReady(`http://127.0.0.1:${sidecarPort}/readyz`);
    await waitReady(`http://127.0.0.1:${unbatchedPort}/readyz`);
    await waitReady(`http://127.0.0.1:${helloPort}/`);
    await waitReady(`http://127.0.0.1:${batchedHelloPort}/`);
    const body = JSON.stringify({ ip: '203.0.113.7', method: 'GET', host: 'shop.example', path: '/api/items', headers: { 'user-agent': 'bench' } });
    const urls = { hello: helloPort, batched: sidecarPort, unbatched: unbatchedPort, batchedHello: batchedHelloPort };
    const url = (name: keyof typeof urls) => `http://127.0.0.1:${urls[name]}/v1/check`;
    note(`http: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up each, then ${ROUNDS} rounds of ${DURATION_S} s each (hello-world, sidecar, sidecar unbatched, batching hello-world)`);
    for (const name of ['hello', 'batched', 'unbatched', 'batchedHello'] as const) await load(url(name), body, WARMUP_S);
    const rounds = { hello: [] as Round[], batched: [] as Round[], unbatched: [] as Round[], batchedHello: [] as Round[] };
    for (let round = 0; round < ROUNDS; round++) {
      // The sidecars swap places every round, so neither always follows the hello-world.
      const order = round % 2 === 0 ? (['hello', 'batched', 'unbatched', 'batchedHello'] as const) : (['hello', 'unbatched', 'batched', 'batchedHello'] as const);
      for (const name of order) rounds[name].push(await load(url(name), body));
      const rate = (name: keyof typeof rounds) => Math.round(rounds[name][round]!.perS);
      note(`http round ${round + 1}: hello-world ${rate('hello')}/s, sidecar ${rate('batched')}/s, unbatched ${rate('unbatched')}/s, batching hello-world ${rate('batchedHello')}/s`);
    }
    const lightRounds = { batched: [] as LightRound[], unbatched: [] as LightRound[] };
    for (let round = 0; round < LIGHT_ROUNDS; round++) {
      for (const name of round % 2 === 0 ? (['batched', 'unbatched'] as const) : (['unbatched', 'batched'] as const)) {
        lightRounds[name].push(await lightLoadLatency(url(name), body));
      }
    }
    const lightMedian = (rs: LightRound[]) => ({ p50Us: median(rs.map((r) => r.p50Us)), p99Us: median(rs.map((r) => r.p99Us)) });
    const light = { batched: lightMedian(lightRounds.batched), unbatched: lightMedian(lightRounds.unbatched) };
    const hello = summary(rounds.hello, rounds.hello);
    const batched = summary(rounds.batched, rounds.hello);
    const toBatchedCeiling = summary(rounds.batched, rounds.batchedHello);
    const unbatched = summary(rounds.unbatched, rounds.hello);
    return {
      http_checks_per_s: batched.perS,
      http_ceiling_per_s: hello.perS,
      http_ratio: batched.ratio,
      http_ratio_min: batched.ratioMin,
      http_latency_mean_ms: batched.meanMs,
      http_latency_p99_ms: batched.p99Ms,
      http_ceiling_latency_mean_ms: hello.meanMs,
      http_ceiling_latency_p99_ms: hello.p99Ms,
      http_batched_ceiling_per_s: Math.round(median(rounds.batchedHello.map((r) => r.perS))),
      http_ratio_to_batched_ceiling: toBatchedCeiling.ratio,
      http_unbatched_checks_per_s: unbatched.perS,
      http_unbatched_ratio: unbatched.ratio,
      http_unbatched_latency_mean_ms: unbatched.meanMs,
      http_unbatched_latency_p99_ms: unbatched.p99Ms,
      http_light_load_p50_us: light.batched.p50Us,
      http_light_load_p99_us: light.batched.p99Us,
      http_unbatched_light_load_p50_us: light.unbatched.p50Us,
      http_unbatched_light_load_p99_us: light.unbatched.p99Us,
    };
  } finally {
    for (const c of children) c.kill('SIGTERM');
  }
}
