import type { RequestEvent } from './types.js';

/**
 * A RequestEvent with neutral defaults, the given fields over them: for tests,
 * benchmarks and examples that care about a few fields only. The defaults: eventId
 * `e1`, timestamp 1_700_000_000_000 (2023-11-14T22:13:20Z, a fixed instant: nothing
 * reads the clock), ip `203.0.113.7` (TEST-NET-3, RFC 5737), method `GET`, host
 * `shop.example`, path `/`, status 200, headers `{}` (a new object each call),
 * edgeId `edge-1`, and null for every nullable field (country, region, asn, route,
 * userId, apiKeyHash, latencyMs); cost 1.
 */
export function requestEvent(fields: Partial<RequestEvent> = {}): RequestEvent {
  return {
    eventId: 'e1',
    timestamp: 1_700_000_000_000,
    ip: '203.0.113.7',
    country: null,
    region: null,
    asn: null,
    method: 'GET',
    host: 'shop.example',
    path: '/',
    route: null,
    status: 200,
    userId: null,
    apiKeyHash: null,
    headers: {},
    edgeId: 'edge-1',
    latencyMs: null,
    cost: 1,
    ...fields,
  };
}
