import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { formatIpv4 } from '@banstream/core';
import { isEncoded, type BufferedEvent } from '@banstream/edge';
import { createHttpServer, createLogger, createMetricsRegistry } from '@banstream/platform';
import { loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { EVENT_RULES } from '../events/event-rules.js';
import { EventValidator } from '../events/validate.js';
import { ingestMetrics } from '../metrics.js';
import { parseEdgeTokens } from './edge-auth.js';
import { eventsRoute, type EventsRouteOptions } from './events-route.js';

const catalog = loadSchemaCatalog();
const batchCodec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
const TOKEN = 'edge-token-0123456789abcdef';
/** The gateway's clock in these tests. */
const NOW = 1_700_000_060_000;
const event = { eventId: 'e1', timestamp: 1_700_000_000_000, ip: '203.0.113.7', method: 'GET', host: 'shop.example', path: '/', status: 200, edgeId: 'edge-1' };

const eventType = catalog.latest(SCHEMA_NAMES.requestEvent).type;
/** What the publisher was offered, as objects whichever path (Avro bytes or JSON objects) produced them. */
const asObject = (e: BufferedEvent): RequestEvent => (isEncoded(e) ? (eventType.fromBuffer(Buffer.from(e.body)) as RequestEvent) : e);

let app: FastifyInstance | undefined;
afterEach(async () => app?.close());

const australia = (ip: string) => (ip.startsWith('203.') ? { country: 'AU', region: null, asn: null } : undefined);

/** The route on a real Fastify server, driven by inject(); the publisher is a stand-in that keeps what it is offered. */
async function gateway(overrides: Partial<EventsRouteOptions> = {}) {
  const offered: RequestEvent[][] = [];
  let room = true;
  app = createHttpServer(createLogger({ service: 'test', level: 'silent' }));
  await app.register(eventsRoute, {
    publisher: { offer: (events) => (room ? (offered.push(events.map(asObject)), true) : false) },
    validator: new EventValidator(catalog.latest(SCHEMA_NAMES.requestEvent).schema, EVENT_RULES),
    batchCodec,
    eventType,
    geo: () => ({ lookup: australia, lookupIpv4: (address) => australia(formatIpv4(address)) }),
    tokens: undefined,
    bodyLimit: 64 * 1024,
    maxFutureMs: 5_000,
    clock: { now: () => NOW },
    retryAfterSeconds: 2,
    unavailable: () => undefined,
    metrics: ingestMetrics(createMetricsRegistry('test', { defaultMetrics: false })),
    ...overrides,
  });
  const post = (payload: string | Buffer, contentType?: string, headers: Record<string, string> = {}) =>
    app!.inject({ method: 'POST', url: '/v1/events', payload, headers: { ...(contentType ? { 'content-type': contentType } : {}), ...headers } });
  return { offered, post, full: () => (room = false) };
}

describe('POST /v1/events', () => {
  it('accepts a JSON array with 202, normalised and with the country filled in, an edge-supplied country kept', async () => {
    const { offered, post } = await gateway();
    const res = await post(JSON.stringify([event, { ...event, eventId: 'e2', country: 'nz' }]), 'application/json; charset=utf-8');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 2 });
    expect(offered[0]!.map((e) => e.country)).toEqual(['AU', 'NZ']);
  });

  it('accepts an Avro RequestEventBatch (single-object encoding) with 202', async () => {
    const { offered, post } = await gateway();
    const res = await post(batchCodec.encode({ events: [requestEvent(event), requestEvent({ ...event, ip: '2001:DB8::1' })] }), 'application/avro');
    expect(res.statusCode).toBe(202);
    expect(offered[0]!.map((e) => e.ip)).toEqual(['203.0.113.7', '2001:db8::1']);
  });

  it('answers 400 naming each invalid event as an RFC 9457 problem, and accepts none of the batch', async () => {
    const { offered, post } = await gateway();
    const res = await post(JSON.stringify([event, { ...event, ip: 'nope' }]), 'application/json');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      code: 'INVALID_EVENTS',
      detail: '1 of 2 events are invalid; none of the batch was accepted',
      errors: [{ index: 1, path: '/ip', message: 'not an IP address: "nope" (unexpected "n" at position 0)' }],
    });
    expect(offered).toEqual([]);
  });

  it('answers 400 naming an event dated too far ahead of its clock, in JSON and in Avro, and accepts none of the batch', async () => {
    const { offered, post } = await gateway();
    const early = { ...event, eventId: 'e2', timestamp: NOW + 5_000 }; // a fast edge clock, at the bound
    const ahead = { ...event, eventId: 'e3', timestamp: NOW + 55_000 };
    const refused = {
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      code: 'INVALID_EVENTS',
      detail: '1 of 3 events are invalid; none of the batch was accepted',
      errors: [{ index: 2, path: '/timestamp', message: 'is 55000 ms ahead of the gateway clock (at most 5000 ms ahead is accepted)' }],
    };
    const json = await post(JSON.stringify([event, early, ahead]), 'application/json');
    expect([json.statusCode, json.json()]).toEqual([400, refused]);
    // Otherwise in normal form, this batch would take the Avro fast path: the bound sends it to the slow path, which words it.
    const avro = await post(batchCodec.encode({ events: [requestEvent(event), requestEvent(early), requestEvent(ahead)] }), 'application/avro');
    expect([avro.statusCode, avro.json()]).toEqual([400, refused]);
    expect(offered).toEqual([]);
    const fine = await post(batchCodec.encode({ events: [requestEvent(event), requestEvent(early)] }), 'application/avro');
    expect(fine.statusCode).toBe(202);
    expect(offered[0]!.map((e) => e.timestamp)).toEqual([event.timestamp, NOW + 5_000]);
  });

  it('answers 400 for a body that is not JSON, not an array, or not Avro', async () => {
    const { post } = await gateway();
    const notJson = await post('[{', 'application/json');
    expect([notJson.statusCode, notJson.json().code]).toEqual([400, 'BAD_JSON']);
    expect(notJson.json().detail).toMatch(/^the body is not JSON: /);
    const notArray = await post('{"events":[]}', 'application/json');
    expect(notArray.json()).toMatchObject({ status: 400, code: 'BAD_JSON', detail: 'the body must be a JSON array of events, not object' });
    const notAvro = await post(Buffer.from('not avro'), 'application/avro');
    expect(notAvro.json()).toMatchObject({ status: 400, code: 'BAD_AVRO' });
    expect(notAvro.json().detail).toContain('SCHEMA_BAD_MAGIC');
    const truncated = await post(batchCodec.encode({ events: [requestEvent(event)] }).subarray(0, 20), 'application/avro');
    expect(truncated.json().detail).toContain('SCHEMA_TRUNCATED');
  });

  it('answers 413 over the body limit and 415 for other content types', async () => {
    const { post } = await gateway({ bodyLimit: 1024 });
    const large = await post(JSON.stringify(Array.from({ length: 20 }, () => event)), 'application/json');
    expect(large.json()).toEqual({
      type: 'about:blank',
      title: 'Content Too Large',
      status: 413,
      code: 'BODY_TOO_LARGE',
      detail: 'the body is larger than the limit of 1024 bytes (INGEST_BODY_LIMIT_BYTES): send smaller batches',
    });
    const text = await post('hello', 'text/plain');
    expect([text.statusCode, text.json().code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    expect(text.json().detail).toContain('application/json');
    const none = await post('[]');
    expect(none.statusCode).toBe(415);
  });

  it('answers 401 without a valid edge token when tokens are configured', async () => {
    const { post } = await gateway({ tokens: parseEdgeTokens(TOKEN) });
    const missing = await post('[]', 'application/json');
    expect([missing.statusCode, missing.json().code, missing.headers['www-authenticate']]).toEqual([401, 'UNAUTHORIZED', 'Bearer realm="banstream-ingest"']);
    const wrong = await post('[]', 'application/json', { authorization: `Bearer ${TOKEN}x` });
    expect(wrong.statusCode).toBe(401);
    const right = await post('[]', 'application/json', { authorization: `Bearer ${TOKEN}` });
    expect(right.statusCode).toBe(202);
  });

  it('answers 503 with Retry-After when the publisher has no room, and while starting or stopping', async () => {
    const { post, full: fillUp } = await gateway();
    fillUp();
    const res = await post(JSON.stringify([event]), 'application/json');
    expect([res.statusCode, res.json().code, res.headers['retry-after']]).toEqual([503, 'BUFFER_FULL', '2']);
    await app!.close();
    const stopping = await gateway({ unavailable: () => 'the gateway is shutting down' });
    const res2 = await stopping.post(JSON.stringify([event]), 'application/json');
    expect([res2.statusCode, res2.json().code, res2.json().detail, res2.headers['retry-after']]).toEqual([503, 'UNAVAILABLE', 'the gateway is shutting down', '2']);
  });

  it('answers 500 INTERNAL, not a 400 that would tell the edge to drop the batch, when the gateway itself fails', async () => {
    const broken = () => {
      throw new Error('geography database gone');
    };
    const { offered, post } = await gateway({ geo: () => ({ lookup: broken, lookupIpv4: broken }) });
    for (const [body, type] of [
      [JSON.stringify([event]), 'application/json'],
      [batchCodec.encode({ events: [requestEvent(event)] }), 'application/avro'],
    ] as const) {
      const res = await post(body, type);
      expect([res.statusCode, res.json().code]).toEqual([500, 'INTERNAL']);
    }
    expect(offered).toEqual([]);
  });

  it('serves the JSON Schema it validates with', async () => {
    await gateway();
    const res = await app!.inject({ method: 'GET', url: '/v1/events/schema' });
    expect(res.json()).toMatchObject({ title: 'RequestEvent', additionalProperties: false, properties: { ip: { type: 'string', maxLength: 64 } } });
  });
});
