/**
 * The soak's pipeline: the built services as their own processes (like
 * bench/propagation.bench.ts), on one topic prefix, with the soak's policies.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { PolicySpec } from '@banstream/core';
import { exitWithin, spawnService, type RunningProcess } from '../../test/support/processes.js';
import { freePort, waitReady } from '../aggregator/service.js';

export type ServiceName = 'aggregator' | 'enforcer' | 'control' | 'ingest';
export const SERVICES: readonly ServiceName[] = ['aggregator', 'enforcer', 'control', 'ingest'];

export interface Service {
  name: ServiceName;
  port: number;
  proc: RunningProcess;
}

/**
 * A per-IP ban whose bans are short (so the ban feed carries tombstones too), a
 * per-user throttle, and a per-country count. Normal clients stay far below the
 * first two (see traffic.ts); the attackers cross them.
 */
export const SOAK_POLICIES: PolicySpec[] = [
  {
    id: 'soak-ip-ban',
    description: 'Soak: requests per IP; bans above 600 a minute for 30 s.',
    key: ['ip'],
    threshold: { count: 600, interval: '1m' },
    action: { type: 'ban', banDuration: '30s', status: 403 },
  },
  {
    id: 'soak-user-throttle',
    description: 'Soak: requests per user; throttles above 300 a minute.',
    key: ['user'],
    threshold: { count: 300, interval: '1m' },
    action: { type: 'throttle', status: 429 },
  },
  {
    id: 'soak-country-count',
    description: 'Soak: requests per country over 5 minutes (alert far above the load).',
    key: ['country'],
    threshold: { count: 1_000_000_000, interval: '5m' },
    action: { type: 'alert' },
  },
];

export interface Pipeline {
  services: Service[];
  port(name: ServiceName): number;
  /** A viewer token for the control API. */
  viewerToken: string;
  /** Services that exited before stop(), with their exit and last output. */
  died(): string[];
  stop(): Promise<void>;
}

export async function startPipeline(env: Record<string, string>, groupId: string): Promise<Pipeline> {
  const viewerToken = `bst_${randomBytes(24).toString('base64url')}`;
  const tokenEntry = `soak-viewer:viewer:${createHash('sha256').update(viewerToken).digest('hex')}`;
  const extra: Record<ServiceName, Record<string, string>> = {
    aggregator: { AGGREGATOR_GROUP_ID: groupId },
    enforcer: {},
    control: { CONTROL_TOKENS: tokenEntry },
    // The soak posts without an edge token, as a local gateway may when told so.
    ingest: { INGEST_ALLOW_ANONYMOUS_EDGES: 'true' },
  };
  const services: Service[] = [];
  let stopping = false;
  const stop = async () => {
    stopping = true;
    await Promise.all(
      services.map(async (s) => {
        s.proc.child.kill('SIGTERM');
        await exitWithin(s.proc, 20_000).catch(() => s.proc.child.kill('SIGKILL'));
      }),
    );
  };
  try {
    for (const name of SERVICES) {
      const port = await freePort();
      // SOAK_SERVICE_NODE_OPTIONS, e.g. --heapsnapshot-signal=SIGUSR2, to look inside a service that grows.
      const debug: Record<string, string> = process.env.SOAK_SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SOAK_SERVICE_NODE_OPTIONS } : {};
      const proc = spawnService(name, { ...env, ...extra[name], ...debug, HTTP_PORT: String(port), SERVICE_NAME: name });
      services.push({ name, port, proc });
      await waitReady(`http://127.0.0.1:${port}/readyz`);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const exits = new Map<ServiceName, number | string>();
  for (const s of services) void s.proc.exited.then((code) => !stopping && exits.set(s.name, code));
  return {
    services,
    viewerToken,
    port: (name) => services.find((s) => s.name === name)!.port,
    died: () =>
      [...exits].map(
        ([name, code]) =>
          `${name} exited (${code}):\n${services
            .find((s) => s.name === name)!
            .proc.output()
            .slice(-3_000)}`,
      ),
    stop,
  };
}
