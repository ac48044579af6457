import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, type Client, type ServiceError } from '@grpc/grpc-js';
import { normaliseSubject } from '@banstream/core';
import { testInfra, waitUntil } from './support/infra.js';
import { encodeBan, manualBan } from './support/bans.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { describeProcess, exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { authorizationService } from '../services/enforcer/src/grpc/protos.js';
import type { CheckRequest, CheckResponse } from '../services/enforcer/src/grpc/messages.js';

const banMessage = (typed: string) => {
  const subject = normaliseSubject(typed);
  return { key: subject, value: encodeBan(manualBan(subject)) };
};

/**
 * The real sidecar process on the real Kafka, asked as Envoy asks: HTTP ext_authz on
 * any method under the prefix (200 allows), and gRPC Authorization/Check with a client
 * built from the same protos. Bans written to the bans topic as the control API writes
 * them deny on both.
 */
describe('Envoy ext_authz, HTTP and gRPC, against the sidecar', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  let broker: TestBroker | undefined;
  let proc: RunningProcess | undefined;
  let url = '';
  let client: Client | undefined;

  const check = (request: CheckRequest) =>
    new Promise<CheckResponse>((resolve, reject) =>
      (client as unknown as { Check(r: CheckRequest, cb: (e: ServiceError | null, r: CheckResponse) => void): void }).Check(request, (e, r) => (e ? reject(e) : resolve(r))),
    );
  const grpcAsk = (address: string, method: string, path: string, headers: Record<string, string> = {}) =>
    check({ attributes: { source: { address: { socket_address: { address, port_value: 40000 } } }, request: { http: { method, path, host: 'shop.example', headers } } } });
  const httpAsk = (client: string, method: string, path: string) => fetch(`${url}/envoy${path}`, { method, headers: { 'x-forwarded-for': client, host: 'shop.example' } });

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    await produceOrFail(broker.producer, broker.topics.name('bans'), [banMessage('ip:198.51.100.66'), banMessage('path:/admin'), banMessage('user:mallory')]);
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    proc = spawnService('enforcer', {
      ...broker.env,
      REDIS_URL: redisUrl,
      HTTP_PORT: String(httpPort),
      ENFORCER_GRPC_PORT: String(grpcPort),
      ENFORCER_EXT_AUTHZ_PREFIX: '/envoy',
      LOG_LEVEL: 'warn',
    });
    url = `http://127.0.0.1:${httpPort}`;
    await waitUntil(
      async () => (await fetch(`${url}/readyz`)).status === 200,
      () => `enforcer ready: ${describeProcess(proc!)}`,
      60_000,
      50,
    );
    client = new (authorizationService().Client)(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
    // The bans were written before the start, so ready means read; this says so if not.
    await waitUntil(async () => (await httpAsk('198.51.100.66', 'GET', '/')).status === 403, 'the address ban applied', 20_000, 50);
  }, 120_000);

  afterAll(async () => {
    client?.close();
    if (proc) {
      proc.child.kill('SIGTERM');
      await exitWithin(proc, 15_000);
    }
    await broker?.close();
  });

  it('HTTP: allows any method on any path with 200, and denies a banned address or path with 403, Retry-After and a problem', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']) {
      const allowed = await httpAsk('198.51.100.7', method, '/api/items?q=1');
      expect([method, allowed.status]).toEqual([method, 200]);
    }
    const banned = await httpAsk('198.51.100.66', 'POST', '/api/items');
    expect(banned.status).toBe(403);
    expect(banned.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(banned.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await banned.json()).toMatchObject({ status: 403, type: 'https://banstream.dev/problems/banned' });
    expect((await httpAsk('198.51.100.7', 'DELETE', '/admin')).status).toBe(403);
    expect((await httpAsk('198.51.100.7', 'GET', '/administrator')).status).toBe(200);
  });

  it('gRPC: answers OK for an allowed request, and PERMISSION_DENIED with 403, headers and body for a banned address, path or user', async () => {
    const allowed = await grpcAsk('198.51.100.7', 'GET', '/api/items?q=1', { 'user-agent': 'curl' });
    expect(allowed.status.code ?? 0).toBe(0);
    expect(allowed.ok_response).toBeDefined();
    for (const [address, method, path, headers] of [
      ['198.51.100.66', 'GET', '/', {}],
      ['2001:db8::1', 'PUT', '/admin', {}],
      ['198.51.100.7', 'POST', '/api/items', { 'x-banstream-user': 'mallory' }],
    ] as const) {
      const denied = await grpcAsk(address, method, path, headers);
      expect([path, denied.status.code, denied.denied_response?.status.code]).toEqual([path, 7, 403]);
      const names = denied.denied_response!.headers.map((h) => h.header.key);
      expect(names).toEqual(expect.arrayContaining(['retry-after', 'content-type']));
      expect(JSON.parse(denied.denied_response!.body)).toMatchObject({ status: 403, type: 'https://banstream.dev/problems/banned' });
    }
    const unreadable = await grpcAsk('not-an-address', 'GET', '/');
    expect([unreadable.status.code, unreadable.denied_response?.status.code]).toEqual([3, 400]);
  });
});
