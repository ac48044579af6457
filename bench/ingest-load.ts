/**
 * Inputs and load for `npm run bench -- ingest`: seeded request events, their JSON and
 * Avro batch bodies, and a keep-alive HTTP client with a fixed number of requests in
 * flight. Kept apart from ingest.bench.ts so the measurement reads in one screen.
 */
import { Agent, request } from 'node:http';
import type { RequestEvent } from '@banstream/schemas';
import { prng } from './lib.js';

const PATHS = ['/', '/login', '/api/v1/cart', '/api/v1/products/42', '/search', '/checkout'];
const AGENTS = ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'curl/8.5.0', 'okhttp/4.12.0'];

/**
 * Events from `networks` client /24s spread over the IPv4 space (so the geography
 * database answers for most), a few users, headers and statuses: what an edge sends.
 * One a millisecond, the last at `t0`: the gateway refuses events dated ahead of its clock.
 */
export function seededEvents(count: number, networks: number, seed: number, t0: number): RequestEvent[] {
  const random = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const prefixes = Array.from({ length: networks }, () => `${1 + Math.floor(random() * 222)}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}`);
  return Array.from({ length: count }, (_, i) => ({
    eventId: `bench-${seed}-${i}`,
    timestamp: t0 - count + 1 + i,
    ip: `${pick(prefixes)}.${1 + Math.floor(random() * 254)}`,
    country: null,
    region: null,
    asn: null,
    method: random() < 0.8 ? 'GET' : 'POST',
    host: 'shop.example',
    path: pick(PATHS),
    route: null,
    status: random() < 0.9 ? 200 : 404,
    userId: random() < 0.3 ? `user-${Math.floor(random() * 1000)}` : null,
    apiKeyHash: null,
    headers: { 'user-agent': pick(AGENTS) },
    edgeId: 'edge-bench-1',
    latencyMs: null,
  }));
}

/** The ingest run's inputs: `events` seeded events (seed 42, the last at `t0`) in batches of `batch`; the gateway and the ceiling process make them alike. */
export function runBatches(events: number, networks: number, batch: number, t0: number): RequestEvent[][] {
  return chunks(seededEvents(events, networks, 42, t0), batch);
}

export function chunks<T>(xs: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

/** POSTs with `concurrency` requests in flight over keep-alive sockets. */
export class Loader {
  private readonly agent: Agent;

  constructor(
    private readonly url: URL,
    private readonly concurrency: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  }

  /** Posts every body once; a 503 is retried after 5 ms (counted). Resolves when all got 202. */
  async postAll(bodies: readonly Buffer[], contentType: string): Promise<{ retried: number }> {
    let next = 0;
    let retried = 0;
    const worker = async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        for (;;) {
          const status = await this.post(body, contentType);
          if (status === 202) break;
          if (status !== 503) throw new Error(`gateway answered ${status}`);
          retried++;
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    };
    await Promise.all(Array.from({ length: this.concurrency }, worker));
    return { retried };
  }

  close(): void {
    this.agent.destroy();
  }

  private post(body: Buffer, contentType: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request(this.url, { method: 'POST', agent: this.agent, headers: { 'content-type': contentType, 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}
