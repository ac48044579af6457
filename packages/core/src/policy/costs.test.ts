import { describe, expect, it } from 'vitest';
import { DEFAULT_COST, MAX_COST } from '../cost.js';
import { isBanstreamError } from '../errors.js';
import { attributesFromEvent, attributesFromRequest } from '../subjects/index.js';
import { compilePolicy } from './compile.js';

const request = (over: { method?: string; path?: string; route?: string; cost?: number } = {}) =>
  attributesFromRequest({ ip: '203.0.113.7', method: 'GET', host: 'shop.example', path: '/', ...over }, 1_700_000_000_000);

const policy = (costs?: unknown) => compilePolicy({ id: 'p', key: ['ip'], threshold: { count: 10, interval: '1m' }, action: { type: 'throttle' }, ...(costs === undefined ? {} : { costs }) } as never);

describe('a policy’s cost of a request', () => {
  it('is the request’s own cost without costs: 1 unless it names one', () => {
    expect(policy().costOf(request())).toBe(DEFAULT_COST);
    expect(policy().costOf(request({ cost: 7 }))).toBe(7);
  });

  it('is the first matching rule’s cost, which replaces the request’s own; the request’s own when none matches', () => {
    const p = policy([
      { methods: ['POST'], paths: ['/login'], cost: 5 },
      { pathPrefixes: ['/api/search/'], cost: 20 },
      { routes: ['/users/:id'], cost: 2 },
      { methods: ['POST'], cost: 3 },
    ]);
    expect(p.costOf(request({ method: 'POST', path: '/login' }))).toBe(5);
    expect(p.costOf(request({ method: 'POST', path: '/login', cost: 100 }))).toBe(5);
    expect(p.costOf(request({ method: 'POST', path: '/cart' }))).toBe(3);
    expect(p.costOf(request({ path: '/api/search/shoes' }))).toBe(20);
    expect(p.costOf(request({ path: '/users/42', route: '/users/:id' }))).toBe(2);
    expect(p.costOf(request({ path: '/users/42' }))).toBe(1);
    expect(p.costOf(request({ path: '/', cost: 9 }))).toBe(9);
  });

  it('matches the normalised path, as match does', () => {
    expect(policy([{ paths: ['/login'], cost: 5 }]).costOf(request({ path: '/a/../log%69n?x=1' }))).toBe(5);
  });
});

describe('request costs on attributes', () => {
  it('reads an event’s cost, 1 when it has none (a v1 record), and refuses one out of range with COST_OUT_OF_RANGE', () => {
    const event = { timestamp: 1, ip: '203.0.113.7', country: null, region: null, asn: null, method: 'GET', host: 'h', path: '/', route: null, status: 200, userId: null, apiKeyHash: null };
    expect(attributesFromEvent(event).cost).toBe(1);
    expect(attributesFromEvent({ ...event, cost: MAX_COST }).cost).toBe(MAX_COST);
    for (const cost of [0, -1, MAX_COST + 1, 1.5, Number.NaN, 2 ** 31]) {
      let code: string | undefined;
      try {
        attributesFromEvent({ ...event, cost });
      } catch (error) {
        code = isBanstreamError(error) ? error.code : 'other';
      }
      expect(code, String(cost)).toBe('COST_OUT_OF_RANGE');
    }
    expect(() => request({ cost: 0 })).toThrow(/cost: 0 is out of range \(1 to 1000000\)/);
  });
});
