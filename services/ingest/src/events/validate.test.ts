import { describe, expect, it } from 'vitest';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { EVENT_RULES } from './event-rules.js';
import { EventValidator } from './validate.js';

const validator = new EventValidator(loadSchemaCatalog().latest(SCHEMA_NAMES.requestEvent).schema, EVENT_RULES, 5);
const TIME = { nowMs: 1_700_000_000_000, maxFutureMs: 5_000 };
const minimal = { eventId: 'e1', timestamp: 1_700_000_000_000, ip: '203.0.113.7', method: 'GET', host: 'shop.example', path: '/', status: 200, edgeId: 'edge-1' };

describe('EventValidator', () => {
  it('fills defaults and normalises: canonical IP, upper-case method and country, host without port, path without query, lower-case header names', () => {
    const result = validator.validate(
      [
        {
          ...minimal,
          ip: '::ffff:203.0.113.7',
          method: 'post',
          host: 'Shop.Example:8443',
          path: '/login?next=/account',
          country: 'fr',
          region: 'fr-idf',
          apiKeyHash: 'AB'.repeat(32),
          headers: { 'User-Agent': 'curl/8' },
        },
      ],
      TIME,
    );
    expect(result).toEqual({
      ok: true,
      events: [
        {
          eventId: 'e1',
          timestamp: 1_700_000_000_000,
          ip: '203.0.113.7',
          country: 'FR',
          region: 'FR-IDF',
          asn: null,
          method: 'POST',
          host: 'shop.example',
          path: '/login',
          route: null,
          status: 200,
          userId: null,
          apiKeyHash: 'ab'.repeat(32),
          headers: { 'user-agent': 'curl/8' },
          edgeId: 'edge-1',
          latencyMs: null,
          cost: 1,
        },
      ],
      keys: ['203.0.113.0/24'],
    });
  });

  it('publishes the path in the normal form every reader matches: escapes decoded, dot segments removed, runs of / merged', () => {
    const paths = ['/%61dmin', '/a/../admin', '//admin', '/%2e%2e/admin?x=1', 'http://shop.example/admin', '/a%2fb', '/a%zz'];
    const result = validator.validate(
      paths.map((path) => ({ ...minimal, path })),
      TIME,
    );
    expect(result.ok ? result.events.map((e) => e.path) : result).toEqual(['/admin', '/admin', '/admin', '/admin', '/admin', '/a%2Fb', '/a%25zz']);
  });

  it('refuses a path that normalising makes longer than the limit (each stray % is written %25)', () => {
    const result = validator.validate([{ ...minimal, path: `/${'%'.repeat(1000)}` }], TIME);
    expect(result.ok ? [] : result.problems).toEqual([{ index: 0, path: '/path', message: 'is 3001 characters once normalised, more than 2048' }]);
  });

  it('refuses the whole batch when one event is invalid, naming the index and field path of each problem', () => {
    const result = validator.validate([minimal, { ...minimal, ip: '203.0.113', status: 42 }, { ...minimal, country: 'FRA', extra: 1 }, { eventId: 'e4' }, 'not an event'], TIME);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.invalidEvents).toBe(4);
    expect(result.truncated).toBe(true); // 5 problems shown at most here; event 3 alone has several
    expect(result.problems.slice(0, 4)).toEqual([
      { index: 1, path: '/ip', message: 'not an IP address: "203.0.113" (IPv4 needs 4 decimal octets)' },
      { index: 1, path: '/status', message: 'must be 0 (no response) or an HTTP status from 100 to 999' },
      { index: 2, path: '/extra', message: 'Unexpected property' },
      { index: 2, path: '/country', message: "Expected string to match '^[A-Za-z]{2}$', or null" },
    ]);
    expect(result.problems[4]).toEqual({ index: 3, path: '/timestamp', message: 'Expected required property' });
  });

  it('rejects oversized values instead of cutting them', () => {
    const long = (n: number) => 'a'.repeat(n);
    const result = validator.validate(
      [
        { ...minimal, path: `/${long(2048)}` },
        { ...minimal, headers: { 'user-agent': long(1025) } },
        { ...minimal, headers: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`x-h${i}`, 'v'])) },
      ],
      TIME,
    );
    expect(result.ok ? [] : result.problems).toEqual([
      { index: 0, path: '/path', message: 'Expected string length less or equal to 2048' },
      { index: 1, path: '/headers/user-agent', message: 'Expected string length less or equal to 1024' },
      { index: 2, path: '/headers', message: 'Expected object to have no more than 32 properties' },
    ]);
  });

  it('takes a cost from 1 to 1,000,000 (1 when left out) and refuses any other, naming /cost', () => {
    const ok = validator.validate([minimal, { ...minimal, cost: 5 }, { ...minimal, cost: 1_000_000 }], TIME);
    expect(ok.ok ? ok.events.map((e) => e.cost) : ok).toEqual([1, 5, 1_000_000]);
    const bad = validator.validate(
      [0, -1, 1_000_001, 2.5].map((cost) => ({ ...minimal, cost })),
      TIME,
    );
    expect(bad.ok ? [] : bad.problems.map((p) => [p.index, p.path])).toEqual([
      [0, '/cost'],
      [1, '/cost'],
      [2, '/cost'],
      [3, '/cost'],
    ]);
  });

  it('refuses credentials, bad and duplicate header names', () => {
    const result = validator.validate([{ ...minimal, headers: { Authorization: 'Bearer x', 'bad name': 'v', 'X-A': '1', 'x-a': '2' } }], TIME);
    expect(result.ok ? [] : result.problems).toEqual([
      { index: 0, path: '/headers/Authorization', message: 'carries credentials, which must not leave the edge' },
      { index: 0, path: '/headers/bad name', message: 'is not a header name (an HTTP token of 1 to 64 characters)' },
      { index: 0, path: '/headers/x-a', message: 'is given twice (header names are case-insensitive)' },
    ]);
  });

  it('refuses an event dated further ahead of the gateway clock than allowed, naming it and how far ahead, and with it the batch', () => {
    const result = validator.validate(
      [
        { ...minimal, timestamp: TIME.nowMs + TIME.maxFutureMs }, // at the bound: a fast edge clock, accepted
        { ...minimal, timestamp: TIME.nowMs + 55_000 },
        { ...minimal, timestamp: TIME.nowMs - 3_600_000 }, // old events are the aggregator's to judge late
        { ...minimal, timestamp: TIME.nowMs + 3_600_000 },
      ],
      TIME,
    );
    expect(result).toEqual({
      ok: false,
      invalidEvents: 2,
      truncated: false,
      problems: [
        { index: 1, path: '/timestamp', message: 'is 55000 ms ahead of the gateway clock (at most 5000 ms ahead is accepted)' },
        { index: 3, path: '/timestamp', message: 'is 3600000 ms ahead of the gateway clock (at most 5000 ms ahead is accepted)' },
      ],
    });
  });

  it('accepts an empty batch', () => {
    expect(validator.validate([], TIME)).toEqual({ ok: true, events: [], keys: [] });
  });
});
