/**
 * Sidecar HTTP checks per second (POST /v1/check, keep-alive connections) against a
 * Fastify hello-world measured the same way in the same run: what HTTP on this
 * machine allows. Both servers run as their own processes; autocannon drives them
 * from this one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { note } from '../lib.js';
import { freePort } from '../aggregator/service.js';

const DURATION_S = 8;
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

function load(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    autocannon({ url, method: 'POST', body, headers: { 'content-type': 'application/json' }, connections: CONNECTIONS, duration: DURATION_S }, (err, result) => {
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
}

export async function measureHttp(env: Record<string, string>): Promise<HttpFigures> {
  const [sidecarPort, helloPort] = await Promise.all([freePort(), freePort()]);
  const children: ChildProcess[] = [];
  try {
    children.push(spawn(process.execPath, ['services/enforcer/dist/main.js'], { env: { PATH: process.env.PATH ?? '', ...env, HTTP_PORT: String(sidecarPort), LOG_LEVEL: 'warn' }, stdio: 'inherit' }));
    children.push(spawn(process.execPath, ['--input-type=module', '-e', HELLO], { env: { PATH: process.env.PATH ?? '', PORT: String(helloPort) }, stdio: 'inherit' }));
    await waitReady(`http://127.0.0.1:${sidecarPort}/readyz`);
    await waitReady(`http://127.0.0.1:${helloPort}/`);
    const body = JSON.stringify({ ip: '203.0.113.7', method: 'GET', host: 'shop.example', path: '/api/items', headers: { 'user-agent': 'bench' } });
    note(`http: ${CONNECTIONS} connections, ${DURATION_S} s each`);
    const ceiling = await load(`http://127.0.0.1:${helloPort}/v1/check`, body);
    const checks = await load(`http://127.0.0.1:${sidecarPort}/v1/check`, body);
    return { http_checks_per_s: Math.round(checks), http_ceiling_per_s: Math.round(ceiling), http_ratio: Number((checks / ceiling).toFixed(3)) };
  } finally {
    for (const c of children) c.kill('SIGTERM');
  }
}
