import { describe, expect, it } from 'vitest';
import { attributesFromEvent, compilePolicy, type PolicySpec } from '@banstream/core';
import { loadSchemaCatalog, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { countedEventsDecoder, readsHeaders } from './counted-event.js';

const policy = (spec: Partial<PolicySpec>) => compilePolicy({ id: 'p', key: ['ip'], threshold: { count: 1, interval: '1m' }, action: { type: 'throttle' }, ...spec });

const event: RequestEvent = {
  eventId: 'e1',
  timestamp: 1_700_000_000_000,
  ip: '203.0.113.7',
  country: 'FR',
  region: 'FR-IDF',
  asn: 64500,
  method: 'POST',
  host: 'shop.example',
  path: '/login',
  route: '/login',
  status: 401,
  userId: 'u1',
  apiKeyHash: null,
  headers: { 'user-agent': 'curl/8', cookie: 'sid=abc' },
  edgeId: 'edge-1',
  latencyMs: 3.5,
};

describe('counted events', () => {
  it('knows which policies read headers: header or cookie keys, header conditions', () => {
    expect(readsHeaders(policy({ key: ['ip'] }))).toBe(false);
    expect(readsHeaders(policy({ key: ['user'], match: { methods: ['POST'], paths: ['/login'], statuses: [401] } }))).toBe(false);
    expect(readsHeaders(policy({ key: ['header:user-agent'] }))).toBe(true);
    expect(readsHeaders(policy({ key: ['ip', 'cookie:sid'] }))).toBe(true);
    expect(readsHeaders(policy({ key: ['ip'], match: { headers: [{ name: 'user-agent', contains: 'curl' }] } }))).toBe(true);
  });

  it('decodes the same attributes with or without the headers, except the headers', () => {
    const catalog = loadSchemaCatalog();
    const record = catalog.codec(SCHEMA_NAMES.requestEventBatch).encode({ events: [event, { ...event, ip: '198.51.100.1', headers: {} }] });
    const [withHeaders, withoutHeaders] = [true, false].map((headers) => countedEventsDecoder(catalog, { headers }).decode(record).events);
    expect(withHeaders![0]!.headers).toEqual(event.headers);
    expect(withoutHeaders![0]!.headers).toBeUndefined();
    for (let i = 0; i < 2; i++) {
      const full = attributesFromEvent(withHeaders![i]!);
      const lean = attributesFromEvent(withoutHeaders![i]!);
      expect({ ...lean, headers: undefined, cookies: undefined }).toEqual({ ...full, headers: undefined, cookies: undefined });
      expect(Object.keys(lean.headers)).toEqual([]);
    }
    expect(attributesFromEvent(withHeaders![0]!).cookies).toEqual({ sid: 'abc' });
  });
});
