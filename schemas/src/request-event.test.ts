import { describe, expect, it } from 'vitest';
import { loadSchemaCatalog } from './catalog-files.js';
import { requestEvent } from './request-event.js';
import { SCHEMA_NAMES, type RequestEvent } from './types.js';

const type = loadSchemaCatalog().latest(SCHEMA_NAMES.requestEvent).type;
/** The field paths avsc refuses, so a failure names them. */
const invalidPaths = (value: unknown) => {
  const paths: string[] = [];
  type.isValid(value, { errorHook: (path) => paths.push(path.join('.')) });
  return paths;
};

describe('requestEvent', () => {
  it('is valid for the newest RequestEvent schema, with its defaults and with fields given', () => {
    expect(invalidPaths(requestEvent())).toEqual([]);
    expect(invalidPaths(requestEvent({ country: 'FR', region: 'FR-IDF', asn: 64500, route: '/login', userId: 'u1', apiKeyHash: 'ab', headers: { 'user-agent': 'curl/8' }, latencyMs: 2.5 }))).toEqual(
      [],
    );
    // The check can fail: a field of the wrong type is named.
    expect(invalidPaths(requestEvent({ status: '200' as never }))).toEqual(['status']);
  });

  it('has the documented neutral defaults, and every schema field', () => {
    const event = requestEvent();
    expect(event).toMatchObject({ eventId: 'e1', timestamp: 1_700_000_000_000, ip: '203.0.113.7', method: 'GET', host: 'shop.example', path: '/', status: 200, headers: {}, edgeId: 'edge-1' });
    expect(Object.keys(event).filter((k) => event[k as keyof RequestEvent] === null)).toEqual(['country', 'region', 'asn', 'route', 'userId', 'apiKeyHash', 'latencyMs']);
    const fields = (loadSchemaCatalog().latest(SCHEMA_NAMES.requestEvent).schema as { fields: { name: string }[] }).fields.map((f) => f.name);
    expect(Object.keys(event).sort()).toEqual(fields.sort());
  });

  it('takes the given fields over the defaults, and gives each event its own headers', () => {
    expect(requestEvent({ ip: '192.0.2.1', status: 429 })).toMatchObject({ ip: '192.0.2.1', status: 429, method: 'GET' });
    const a = requestEvent();
    a.headers['user-agent'] = 'x';
    expect(requestEvent().headers).toEqual({});
  });
});
