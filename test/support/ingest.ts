import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import type { RequestEvent } from '@banstream/schemas';
import { waitUntil } from './infra.js';
import { describeProcess, freePort, spawnService, type RunningProcess } from './processes.js';

/** A CC0 country database that ships in an npm package (a devDependency). */
export const GEO_DB = createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');

export interface Gateway {
  proc: RunningProcess;
  url: string;
  post(body: string | Buffer, contentType: string, headers?: Record<string, string>): Promise<Response>;
  metric(name: string): Promise<number>;
}

/** Starts the built gateway as its own process and waits for /readyz. */
export async function startGateway(env: Record<string, string>): Promise<Gateway> {
  const port = await freePort();
  const proc = spawnService('ingest', { LOG_LEVEL: 'warn', ...env, HTTP_PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(
    async () => (await fetch(`${url}/readyz`)).status === 200,
    () => `ingest on ${port} to be ready (${describeProcess(proc)})`,
    60_000,
    100,
  );
  return {
    proc,
    url,
    post: (body, contentType, headers = {}) => fetch(`${url}/v1/events`, { method: 'POST', body, headers: { 'content-type': contentType, ...headers } }),
    /** The sum over every label set of a metric. */
    async metric(name) {
      const text = await (await fetch(`${url}/metrics`)).text();
      const lines = text.split('\n').filter((l) => l.split(/[{ ]/)[0] === name);
      return lines.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    },
  };
}

/** An event as an edge posts it: only the required fields, plus `extra`. */
export function postedEvent(ip: string, extra: Partial<RequestEvent> = {}): Partial<RequestEvent> {
  return { eventId: randomUUID(), timestamp: Date.now(), ip, method: 'GET', host: 'shop.example', path: '/', status: 200, edgeId: 'edge-test', ...extra };
}

/**
 * The partition Kafka's default partitioner gives a key: murmur2 of its UTF-8 bytes
 * (the Java client's Utils.murmur2), sign bit cleared, modulo the partition count.
 * Written out here, pinned to the Java client's vectors, so the test does not check
 * the gateway's partitioner (KeyPartitioner) against itself.
 */
export function kafkaPartition(key: string, partitions: number): number {
  return (murmur2(Buffer.from(key, 'utf8')) & 0x7fffffff) % partitions;
}

export function murmur2(data: Buffer): number {
  const m = 0x5bd1e995;
  let h = 0x9747b28c ^ data.length;
  const whole = data.length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const rest = data.length & 3;
  if (rest === 3) h ^= data[whole + 2]! << 16;
  if (rest >= 2) h ^= data[whole + 1]! << 8;
  if (rest >= 1) h = Math.imul(h ^ data[whole]!, m);
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}
