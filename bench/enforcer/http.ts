/**
 * Sidecar HTTP checks per second (POST /v1/check, keep-alive connections) against a
 * Fastify hello-world measured the same way in the same run: what HTTP on this
 * machine allows. Both servers run as their own processes; autocannon drives them
 * from this one. Each server is warmed up, then they take turns for ROUNDS short rounds,
 * so a drift of the shared machine falls on both: on this VM the hello-world alone moved
 * between 31,000 and 36,000/s within minutes (and to 12,000–17,000/s on another day), and
 * 5 s rounds left that drift in the ratio. The ratio is the median of the rounds' own
 * ratios (each sidecar round over the hello-world round just before it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { median, note } from '../lib.js';
import { freePort, serviceNodeArgs } from '../aggregator/service.js';

const DURATION_S = 2;
const WARMUP_S = 2;
const ROUNDS = 9;
const CONNECTIONS = 32;

const HELLO = `
import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.post('/v1/check', async () => ({ allowed: true, status: 200, source: 'none', reason: 'hello' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
`;

async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await fetch(url).then((r) => r.status < 500, () => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not ready after 60 s`);
}

function load(url: string, body: string, durationS = DURATION_S): Promise<number> {
  return new Promise((resolve, reject) => {
    autocannon({ url, method: 'POST', body, headers: { 'content-type': 'application/json' }, connections: CONNECTIONS, duration: durationS }, (err, result) => {
      if (err) reject(err);
      else if (result.non2xx > 0 || result.errors > 0) reject(new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`));
      else resolve(result.requests.average);
    });
  });
}

export interface HttpFigures {
  http_checks_per_s: number;
  http_ceiling_per_s: number;
  http_ratio: number;
  /** The lowest of the rounds' own ratios (sidecar over the hello-world just before it). */
  http_ratio_min: number;
}

export async function measureHttp(env: Record<string, string>): Promise<HttpFigures> {
  const [sidecarPort, helloPort] = await Promise.all([freePort(), freePort()]);
  const children: ChildProcess[] = [];
  try {
    children.push(spawn(process.execPath, serviceNodeArgs('enforcer'), { env: { PATH: process.env.PATH ?? '', ...env, HTTP_PORT: String(sidecarPort), LOG_LEVEL: 'warn' }, stdio: 'inherit' }));
    children.push(spawn(process.execPath, ['--input-type=module', '-e', HELLO], { env: { PATH: process.env.PATH ?? '', PORT: String(helloPort) }, stdio: 'inherit' }));
    await waitReady(`http://127.0.0.1:${sidecarPort}/readyz`);
    await waitReady(`http://127.0.0.1:${helloPort}/`);
    const body = JSON.stringify({ ip: '203.0.113.7', method: 'GET', host: 'shop.example', path: '/api/items', headers: { 'user-agent': 'bench' } });
    const hello = `http://127.0.0.1:${helloPort}/v1/check`;
    const sidecar = `http://127.0.0.1:${sidecarPort}/v1/check`;
    note(`http: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up each, then ${ROUNDS} rounds of ${DURATION_S} s each`);
    await load(hello, body, WARMUP_S);
    await load(sidecar, body, WARMUP_S);
    const ceilings: number[] = [];
    const checks: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      ceilings.push(await load(hello, body));
      checks.push(await load(sidecar, body));
      note(`http round ${round + 1}: hello-world ${Math.round(ceilings[round]!)}/s, sidecar ${Math.round(checks[round]!)}/s`);
    }
    const ratios = checks.map((c, i) => c / ceilings[i]!);
    return {
      http_checks_per_s: Math.round(median(checks)), http_ceiling_per_s: Math.round(median(ceilings)),
      http_ratio: Number(median(ratios).toFixed(3)), http_ratio_min: Number(Math.min(...ratios).toFixed(3)),
    };
  } finally {
    for (const c of children) c.kill('SIGTERM');
  }
}
