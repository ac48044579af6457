import type { RequestEvent } from '@banstream/schemas';
import { waitUntil } from './infra.js';
import { postedEvent } from './ingest.js';

/**
 * Traffic for the partition test, sent to the gateway over HTTP as edges do: the
 * event ids it answered 202 for are the books every later check is held to.
 */
export interface GatewayBooks {
  /** Event ids the gateway answered 202 for. */
  readonly accepted: Set<string>;
  /** Answers other than 202, by status (or `error` when the request failed). */
  readonly refused: Map<string, number>;
  post(events: Partial<RequestEvent>[]): Promise<number>;
}

export function gatewayBooks(gatewayUrl: string): GatewayBooks {
  const accepted = new Set<string>();
  const refused = new Map<string, number>();
  return {
    accepted,
    refused,
    async post(events) {
      const status = await fetch(`${gatewayUrl}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(events) }).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status;
        },
        () => 0,
      );
      if (status === 202) for (const e of events) accepted.add(e.eventId!);
      else refused.set(String(status || 'error'), (refused.get(String(status || 'error')) ?? 0) + 1);
      return status;
    },
  };
}

/**
 * `clients` concurrent senders, each posting `perBatch` events every `intervalMs`
 * from addresses of 198.18.0.0/16 taken in turn, so no address comes near a flood
 * threshold.
 */
export function background(books: GatewayBooks, host: string, clients: number, perBatch: number, intervalMs: number): { stop(): Promise<void> } {
  let running = true;
  let next = 0;
  const address = () => {
    const n = next++ % 65_536;
    return `198.18.${n >> 8}.${n & 255}`;
  };
  const loops = Array.from({ length: clients }, async (_, c) => {
    while (running) {
      const started = Date.now();
      await books.post(Array.from({ length: perBatch }, () => postedEvent(address(), { host, edgeId: `edge-${c}` })));
      await new Promise((r) => setTimeout(r, Math.max(0, intervalMs - (Date.now() - started))));
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

export interface Enforcement {
  url: string;
}

/** One flood: its address, when the batch holding the crossing event was posted, and when each enforcer first denied it. */
export interface FloodResult {
  ip: string;
  phase: string;
  postedAt: number;
  deniedAt: number[];
  /** From the post to a ban at every enforcer. */
  delayMs: number;
}

/**
 * Posts `events` requests from `ip` in one batch (past the policy's threshold), then
 * asks every enforcer until each denies `ip` with a ban. A flood never banned fails
 * after `timeoutMs`, naming the enforcers still allowing it.
 */
export async function flood(
  books: GatewayBooks,
  enforcers: readonly Enforcement[],
  ip: string,
  host: string,
  events: number,
  phase: string,
  diagnose: () => Promise<string>,
  timeoutMs = 180_000,
): Promise<FloodResult> {
  const postedAt = Date.now();
  const status = await books.post(Array.from({ length: events }, () => postedEvent(ip, { host, edgeId: 'edge-flood' })));
  if (status !== 202) throw new Error(`the flood from ${ip} was answered ${status}, not 202`);
  const deniedAt = await Promise.all(
    enforcers.map((e) =>
      waitUntil(
        async () => ((await check(e.url, ip)).source === 'ban' ? Date.now() : undefined),
        () => `the flood from ${ip} (${phase}) banned at ${e.url}`,
        timeoutMs,
        20,
      ),
    ),
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}\n${await diagnose().catch((e: Error) => `(no diagnosis: ${e.message})`)}`);
  });
  return { ip, phase, postedAt, deniedAt, delayMs: Math.max(...deniedAt) - postedAt };
}

async function check(url: string, ip: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/v1/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ip, method: 'GET', host: 'shop.example', path: '/' }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${url}/v1/check answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** p50, p99 and the largest of `values` (nearest rank), rounded to a millisecond. */
export function summary(values: readonly number[]): { n: number; p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
  return { n: sorted.length, p50: Math.round(rank(0.5)), p99: Math.round(rank(0.99)), max: Math.round(sorted.at(-1) ?? Number.NaN) };
}
