import { afterEach, describe, expect, it } from 'vitest';
import { credentials, status, type Client, type ServiceError } from '@grpc/grpc-js';
import { BanstreamError } from '@banstream/core';
import { createLogger } from '@banstream/platform';
import type { Decision, Enforcer } from '../enforcer.js';
import { parseTrustedProxies } from '../http/forwarded.js';
import { DEFAULT_HEADER_NAMES, type AskedRequest } from '../http/original-request.js';
import type { CheckRequest, CheckResponse } from './messages.js';
import { authorizationService } from './protos.js';
import { peerAddress, startCheckServer, type CheckServer } from './server.js';

const QUOTA = { policyId: 'api', limit: 100, remaining: 40, windowSeconds: 60 };
const ALLOW: Decision = { allowed: true, status: 200, source: 'none', reason: 'no policy denies this request', previewDenies: [], quota: QUOTA };
const BANNED: Decision = { allowed: false, status: 403, source: 'ban', reason: 'banned by logins', policyId: 'logins', retryAfterSeconds: 600, previewDenies: [] };

let server: CheckServer | undefined;
let client: Client | undefined;
afterEach(async () => {
  client?.close();
  await server?.stop();
  server = client = undefined;
});

/** A real server on loopback with an enforcer stand-in, and a client built from the same protos. */
async function start(options: { decide?: (r: AskedRequest) => Promise<Decision>; trusted?: string; maxMessageBytes?: number; deadlineMs?: number } = {}) {
  const asked: AskedRequest[] = [];
  const decide = options.decide ?? (async () => ALLOW);
  const enforcer = { check: (r: AskedRequest) => (asked.push(r), decide(r)) } as unknown as Enforcer;
  server = await startCheckServer('127.0.0.1', 0, {
    enforcer,
    trustedProxies: parseTrustedProxies(options.trusted ?? '127.0.0.1'),
    names: DEFAULT_HEADER_NAMES,
    maxMessageBytes: options.maxMessageBytes ?? 128 * 1024,
    deadlineMs: options.deadlineMs ?? 5000,
    logger: createLogger({ service: 'test', level: 'silent' }),
  });
  const { Client } = authorizationService();
  client = new Client(`127.0.0.1:${server.port}`, credentials.createInsecure());
  const check = (request: CheckRequest) =>
    new Promise<CheckResponse>((resolve, reject) =>
      (client as unknown as { Check(r: CheckRequest, cb: (e: ServiceError | null, r: CheckResponse) => void): void }).Check(request, (e, r) => (e ? reject(e) : resolve(r))),
    );
  return { asked, check };
}

function request(overrides: { address?: string; headers?: Record<string, string> } = {}): CheckRequest {
  return {
    attributes: {
      source: { address: { socket_address: { address: overrides.address ?? '198.51.100.7', port_value: 51000 } } },
      request: { http: { method: 'POST', path: '/login?next=/', host: 'shop.example', headers: overrides.headers ?? { 'user-agent': 'curl', 'x-banstream-user': 'alice' } } },
    },
  };
}

const headerMap = (options: { header: { key: string; value: string } }[] | undefined) => Object.fromEntries((options ?? []).map((o) => [o.header.key, o.header.value]));

describe('Authorization/Check', () => {
  it('allows with OK and the RateLimit headers for the client, from what the CheckRequest says', async () => {
    const { asked, check } = await start();
    const answer = await check(request());
    expect(answer.status.code ?? 0).toBe(0);
    expect(answer.denied_response).toBeUndefined();
    expect(headerMap(answer.ok_response?.response_headers_to_add)).toEqual({ 'ratelimit-policy': '"api";q=100;w=60', ratelimit: '"api";r=40;t=60' });
    expect(answer.ok_response?.response_headers_to_add[0]?.append_action).toBe(2);
    expect(asked[0]).toMatchObject({ ip: '198.51.100.7', method: 'POST', path: '/login?next=/', host: 'shop.example', userId: 'alice' });
    expect(asked[0]!.headers).toMatchObject({ 'user-agent': 'curl' });
  });

  it('reads headers sent as a list (the filter with encode_raw_headers) over the wire', async () => {
    const { asked, check } = await start();
    const http = {
      method: 'GET',
      path: '/',
      header_map: {
        headers: [
          { key: 'user-agent', raw_value: Buffer.from('curl') },
          { key: 'x-banstream-user', raw_value: Buffer.from('bob') },
        ],
      },
    };
    await check({ attributes: { source: { address: { socket_address: { address: '198.51.100.7' } } }, request: { http } } });
    expect(asked[0]).toMatchObject({ userId: 'bob', headers: { 'user-agent': 'curl', 'x-banstream-user': 'bob' } });
  });

  it('denies a ban with PERMISSION_DENIED and the HTTP answer: its status, Retry-After, problem+json body', async () => {
    const { check } = await start({ decide: async () => BANNED });
    const answer = await check(request());
    expect(answer.status).toMatchObject({ code: 7, message: 'banned by logins' });
    expect(answer.denied_response?.status.code).toBe(403);
    const headers = headerMap(answer.denied_response?.headers);
    expect(headers['content-type']).toBe('application/problem+json');
    expect(Number(headers['retry-after'])).toBeGreaterThanOrEqual(600);
    expect(JSON.parse(answer.denied_response!.body)).toMatchObject({ status: 403, type: 'https://banstream.dev/problems/banned', policy: 'logins', detail: 'banned by logins' });
  });

  it('answers hostile requests with INVALID_ARGUMENT and a 400 naming the field, and keeps answering', async () => {
    const { asked, check } = await start();
    const refusals = [{}, { attributes: {} }, { attributes: { request: { http: { method: 'GET', path: '/' } } } }, request({ address: 'evil.example' })];
    for (const hostile of refusals) {
      const answer = await check(hostile);
      expect(answer.status.code).toBe(3);
      expect(answer.denied_response?.status.code).toBe(400);
      expect(JSON.parse(answer.denied_response!.body)).toMatchObject({ status: 400, code: 'CHECK_REQUEST_INVALID' });
    }
    expect(asked).toHaveLength(0);
    expect((await check(request())).status.code ?? 0).toBe(0);
  });

  it('answers a request the enforcer cannot read (a context value that is not one) with a 400 naming it', async () => {
    const { check } = await start({
      decide: async () => {
        throw new BanstreamError('SUBJECT_INVALID_ATTRIBUTE', 'invalid request attribute country: header x-country "AUS" is not an ISO 3166-1 alpha-2 code');
      },
    });
    const answer = await check(request());
    expect([answer.status.code, answer.denied_response?.status.code]).toEqual([3, 400]);
    expect(JSON.parse(answer.denied_response!.body)).toMatchObject({ code: 'SUBJECT_INVALID_ATTRIBUTE', detail: expect.stringContaining('"AUS"') });
  });

  it('refuses a message over its size bound unread (RESOURCE_EXHAUSTED), and answers the next', async () => {
    const { asked, check } = await start({ maxMessageBytes: 16 * 1024 });
    const huge = request({ headers: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}`, 'v'.repeat(1000)])) });
    await expect(check(huge)).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    expect(asked).toHaveLength(0);
    // Just under the bound, many headers and a long one: read and checked.
    const large = request({ headers: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`x-h${i}`, 'v'.repeat(1000)])) });
    expect((await check(large)).status.code ?? 0).toBe(0);
    expect(Object.keys(asked[0]!.headers ?? {})).toHaveLength(12);
  });

  it('refuses a peer that is not a trusted proxy (PERMISSION_DENIED as an RPC error), deciding nothing', async () => {
    const { asked, check } = await start({ trusted: '10.0.0.0/8' });
    await expect(check(request())).rejects.toMatchObject({ code: status.PERMISSION_DENIED, details: expect.stringContaining('127.0.0.1 is not one of them') });
    expect(asked).toHaveLength(0);
  });

  it('ends a call whose decision does not come within the bound with DEADLINE_EXCEEDED, whatever the client asked', async () => {
    const { check } = await start({ decide: () => new Promise<Decision>(() => undefined), deadlineMs: 50 });
    await expect(check(request())).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED, details: expect.stringContaining('ENFORCER_GRPC_DEADLINE_MS') });
  });
});

describe('peerAddress', () => {
  it('drops the port grpc-js appends, IPv6 included', () => {
    expect([peerAddress('127.0.0.1:5000'), peerAddress('::1:5000'), peerAddress('::ffff:10.0.0.1:80'), peerAddress('unknown')]).toEqual(['127.0.0.1', '::1', '::ffff:10.0.0.1', 'unknown']);
  });
});
