import { describe, expect, it } from 'vitest';
import { formatPath, formatPolicyError, validatePolicyDocument } from './validate.js';
import { suggest } from './validate-messages.js';

type Json = Record<string, unknown>;

/** A valid async throttle policy; each test changes one thing. */
const policy = (over: Json = {}): Json => ({
  id: 'login',
  key: ['ip'],
  threshold: { count: 10, interval: '1m' },
  action: { type: 'throttle' },
  ...over,
});

function lines(doc: unknown): string[] {
  const r = validatePolicyDocument(doc);
  return r.ok ? [] : r.errors.map(formatPolicyError);
}

const one = (p: Json) => lines({ policies: [p] });
const without = (key: string, p: Json = policy()) => Object.fromEntries(Object.entries(p).filter(([k]) => k !== key));
const ban = (over: Json = {}) => ({ type: 'ban', banDuration: '1h', ...over });

describe('validatePolicyDocument: schema rules, one line per problem', () => {
  it.each<[string, Json, string[]]>([
    ['id pattern', policy({ id: 'Login Page' }), ['policies[0].id: must match lower-case letters, digits, dot, dash, underscore; at most 64']],
    ['id length', policy({ id: 'a'.repeat(65) }), ['policies[0].id: must match lower-case letters, digits, dot, dash, underscore; at most 64']],
    ['id type', policy({ id: 42 }), ['policies[0].id: must be a string']],
    ['id required', without('id'), ['policies[0].id: is required']],
    ['description length', policy({ description: 'x'.repeat(1001) }), ['policies[0].description: must be at most 1000 characters']],
    ['owner length', policy({ owner: 'x'.repeat(201) }), ['policies[0].owner: must be at most 200 characters']],
    ['mode', policy({ mode: 'dry-run' }), ['policies[0].mode: must be one of enforce, preview']],
    ['enabled', policy({ enabled: 'yes' }), ['policies[0].enabled: must be true or false']],
    ['group', policy({ group: 'API' }), ['policies[0].group: must match lower-case letters, digits, dot, dash, underscore; at most 64']],
    ['priority integer', policy({ priority: 1.5 }), ['policies[0].priority: must be an integer']],
    ['priority max', policy({ priority: 1001 }), ['policies[0].priority: must be <= 1000']],
    ['priority min', policy({ priority: -1001 }), ['policies[0].priority: must be >= -1000']],
    ['match object', policy({ match: [] }), ['policies[0].match: must be an object']],
    ['methods case', policy({ match: { methods: ['get'] } }), ['policies[0].match.methods[0]: must be an upper-case HTTP method such as GET']],
    ['methods empty', policy({ match: { methods: [] } }), ['policies[0].match.methods: must have at least 1 item']],
    ['methods repeat', policy({ match: { methods: ['GET', 'GET'] } }), ['policies[0].match.methods: must not repeat items']],
    ['hosts empty string', policy({ match: { hosts: [''] } }), ['policies[0].match.hosts[0]: must not be empty']],
    ['pathPrefixes slash', policy({ match: { pathPrefixes: ['api/'] } }), ['policies[0].match.pathPrefixes[0]: must start with /']],
    ['paths slash', policy({ match: { paths: ['users/*'] } }), ['policies[0].match.paths[0]: must start with /']],
    ['header name required', policy({ match: { headers: [{ present: true }] } }), ['policies[0].match.headers[0].name: is required']],
    ['header name length', policy({ match: { headers: [{ name: 'x'.repeat(129), present: true }] } }), ['policies[0].match.headers[0].name: must be at most 128 characters']],
    ['header present type', policy({ match: { headers: [{ name: 'x', present: 'yes' }] } }), ['policies[0].match.headers[0].present: must be true or false']],
    ['header contains empty', policy({ match: { headers: [{ name: 'x', contains: '' }] } }), ['policies[0].match.headers[0].contains: must not be empty']],
    ['header matches length', policy({ match: { headers: [{ name: 'x', matches: 'a'.repeat(513) }] } }), ['policies[0].match.headers[0].matches: must be at most 512 characters']],
    ['countries', policy({ match: { countries: ['fr'] } }), ['policies[0].match.countries[0]: must match ISO 3166-1 alpha-2, e.g. FR']],
    ['regions', policy({ match: { regions: ['IDF'] } }), ['policies[0].match.regions[0]: must match ISO 3166-2, e.g. FR-IDF']],
    ['statuses min', policy({ match: { statuses: [99] } }), ['policies[0].match.statuses[0]: must be >= 100']],
    ['statuses max', policy({ match: { statuses: [600] } }), ['policies[0].match.statuses[0]: must be <= 599']],
    ['statuses integer', policy({ match: { statuses: ['401'] } }), ['policies[0].match.statuses[0]: must be an integer']],
    ['statusClasses', policy({ match: { statusClasses: ['6xx'] } }), ['policies[0].match.statusClasses[0]: must be one of 1xx, 2xx, 3xx, 4xx, 5xx']],
    ['subjects length', policy({ match: { subjects: ['ab'] } }), ['policies[0].match.subjects[0]: must be at least 3 characters']],
    ['key required', without('key'), ['policies[0].key: is required']],
    ['key empty', policy({ key: [] }), ['policies[0].key: must have at least 1 item']],
    ['key repeat', policy({ key: ['ip', 'ip'] }), ['policies[0].key: must not repeat items']],
    ['key item empty', policy({ key: [''] }), ['policies[0].key[0]: must not be empty']],
    ['threshold required', without('threshold'), ['policies[0].threshold: is required']],
    ['count > 0', policy({ threshold: { count: 0, interval: '1m' } }), ['policies[0].threshold.count: must be > 0']],
    ['count integer', policy({ threshold: { count: 2.5, interval: '1m' } }), ['policies[0].threshold.count: must be an integer']],
    ['interval required', policy({ threshold: { count: 1 } }), ['policies[0].threshold.interval: is required']],
    ['interval text', policy({ threshold: { count: 1, interval: '1 minute' } }), ['policies[0].threshold.interval: must be a duration such as 500ms, 30s, 5m, 1h, 7d']],
    ['interval zero', policy({ threshold: { count: 1, interval: 0 } }), ['policies[0].threshold.interval: must be a duration such as 500ms, 30s, 5m, 1h, 7d']],
    ['interval type', policy({ threshold: { count: 1, interval: true } }), ['policies[0].threshold.interval: must be a duration such as 500ms, 30s, 5m, 1h, 7d']],
    ['action required', without('action'), ['policies[0].action: is required']],
    ['action object', policy({ action: 'ban' }), ['policies[0].action: must be an object']],
    ['action type required', policy({ action: { banDuration: '1h' } }), ['policies[0].action.type: is required (one of throttle, ban, alert)']],
    ['action type', policy({ action: { type: 'block' } }), ['policies[0].action.type: must be one of throttle, ban, alert']],
    ['ban needs banDuration', policy({ action: { type: 'ban' } }), ['policies[0].action.banDuration: is required']],
    ['banDuration shape', policy({ action: ban({ banDuration: '1y' }) }), ['policies[0].action.banDuration: must be a duration such as 500ms, 30s, 5m, 1h, 7d']],
    ['status', policy({ action: ban({ status: 500 }) }), ['policies[0].action.status: must be one of 429, 403']],
    ['banThreshold count', policy({ action: ban({ banThreshold: { count: 0, interval: '1m' } }) }), ['policies[0].action.banThreshold.count: must be > 0']],
    ['banThreshold interval', policy({ action: ban({ banThreshold: { count: 20 } }) }), ['policies[0].action.banThreshold.interval: is required']],
    ['throttle has no banDuration', policy({ action: { type: 'throttle', banDuration: '1h' } }), ['policies[0].action.banDuration: unknown field']],
    ['alert has no status', policy({ action: { type: 'alert', status: 429 } }), ['policies[0].action.status: unknown field']],
    ['enforcement type', policy({ enforcement: { type: 'sync' } }), ['policies[0].enforcement.type: must be one of async, hard']],
    ['failureMode', policy({ enforcement: { type: 'hard', failureMode: 'maybe' } }), ['policies[0].enforcement.failureMode: must be one of open, closed, local']],
    ['algorithm', policy({ enforcement: { type: 'hard', failureMode: 'open', algorithm: 'leaky' } }), ['policies[0].enforcement.algorithm: must be one of sliding-window, sliding-log, token-bucket']],
    ['schedule timeZone empty', policy({ schedule: { timeZone: '', from: '01:00', to: '02:00' } }), ['policies[0].schedule.timeZone: must not be empty']],
    ['schedule days', policy({ schedule: { timeZone: 'UTC', days: ['monday'], from: '01:00', to: '02:00' } }), ['policies[0].schedule.days[0]: must be one of mon, tue, wed, thu, fri, sat, sun']],
    ['schedule days empty', policy({ schedule: { timeZone: 'UTC', days: [], from: '01:00', to: '02:00' } }), ['policies[0].schedule.days: must have at least 1 item']],
    ['schedule from', policy({ schedule: { timeZone: 'UTC', from: '9:00', to: '10:00' } }), ['policies[0].schedule.from: must be a local time HH:MM from 00:00 to 23:59']],
    ['schedule from 24:00', policy({ schedule: { timeZone: 'UTC', from: '24:00', to: '10:00' } }), ['policies[0].schedule.from: must be a local time HH:MM from 00:00 to 23:59']],
    ['schedule to', policy({ schedule: { timeZone: 'UTC', from: '09:00', to: '25:00' } }), ['policies[0].schedule.to: must be a local time HH:MM from 00:00 to 24:00']],
    ['schedule to required', policy({ schedule: { timeZone: 'UTC', from: '09:00' } }), ['policies[0].schedule.to: is required']],
    ['escalation multiplier min', policy({ action: ban(), escalation: { multiplier: 0.5, maxDuration: '1d', decayAfter: '7d' } }), ['policies[0].escalation.multiplier: must be >= 1']],
    ['escalation multiplier max', policy({ action: ban(), escalation: { multiplier: 101, maxDuration: '1d', decayAfter: '7d' } }), ['policies[0].escalation.multiplier: must be <= 100']],
    ['escalation decayAfter', policy({ action: ban(), escalation: { multiplier: 2, maxDuration: '1d' } }), ['policies[0].escalation.decayAfter: is required']],
  ])('%s', (_name, p, expected) => {
    expect(one(p)).toEqual(expected);
  });
});

describe('validatePolicyDocument: unknown fields', () => {
  it('names an unknown field and suggests the near miss', () => {
    expect(one({ ...without('threshold'), treshold: { count: 1, interval: '1m' } })).toEqual(['policies[0].threshold: is required', 'policies[0].treshold: unknown field (did you mean "threshold"?)']);
  });

  it('suggests across case and swapped letters, and not for unrelated names', () => {
    expect(one(policy({ match: { method: ['GET'] } }))).toEqual(['policies[0].match.method: unknown field (did you mean "methods"?)']);
    expect(one(policy({ action: ban({ banduration: '1h' }) }))).toEqual(['policies[0].action.banduration: unknown field']);
    expect(one(policy({ prority: 5 }))).toEqual(['policies[0].prority: unknown field (did you mean "priority"?)']);
    expect(one(policy({ colour: 'red' }))).toEqual(['policies[0].colour: unknown field']);
    expect(suggest('treshold', ['threshold', 'action'])).toBe('threshold');
    expect(suggest('xyz', ['threshold'])).toBeUndefined();
  });

  it('quotes field names that are not identifiers', () => {
    expect(one(policy({ 'my field': 1 }))).toEqual(['policies[0]["my field"]: unknown field']);
    expect(formatPath(['policies', 0, 'a.b'])).toBe('policies[0]["a.b"]');
  });

  it('reports unknown fields at the root and in allowlist entries', () => {
    expect(lines({ policies: [], polices: [] })).toEqual(['polices: unknown field']);
    expect(lines({ polices: [] })).toEqual(['policies: is required', 'polices: unknown field (did you mean "policies"?)']);
    expect(lines({ policies: [], allowlist: [{ entry: '10.0.0.1', expires: 'x' }] })).toEqual(['allowlist[0].expires: unknown field (did you mean "expiresAt"?)']);
  });
});

describe('validatePolicyDocument: the document', () => {
  it('refuses anything but an object with a list of policies', () => {
    expect(lines(null)).toEqual(['(root): must be an object']);
    expect(lines({})).toEqual(['policies: is required']);
    expect(lines({ policies: {} })).toEqual(['policies: must be a list']);
    expect(lines({ policies: ['login'] })).toEqual(['policies[0]: must be an object']);
    expect(lines({ policies: [], allowlist: [{}] })).toEqual(['allowlist[0].entry: is required']);
    expect(lines({ policies: [], allowlist: [{ entry: '10.0.0.1', reason: 'x'.repeat(1001) }] })).toEqual(['allowlist[0].reason: must be at most 1000 characters']);
  });

  it('reports every problem of every policy, grouped by policy in document order', () => {
    const doc = { policies: [policy({ id: 'a', mode: 'x' }), policy({ id: 'b' }), policy({ id: 'c', threshold: { count: 0, interval: 'soon' } })] };
    expect(lines(doc)).toEqual([
      'policies[0].mode: must be one of enforce, preview',
      'policies[2].threshold.count: must be > 0',
      'policies[2].threshold.interval: must be a duration such as 500ms, 30s, 5m, 1h, 7d',
    ]);
  });

  it('returns a copy with defaults applied and leaves the input alone', () => {
    const input = { policies: [policy()] };
    const before = structuredClone(input);
    const r = validatePolicyDocument(input);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.document.policies[0]).toMatchObject({ mode: 'preview', enabled: true, priority: 0 });
    expect(input).toEqual(before);
  });

  it('keeps explicit values over defaults', () => {
    const r = validatePolicyDocument({ policies: [policy({ mode: 'enforce', enabled: false, priority: 7 })] });
    expect(r.ok && r.document.policies[0]).toMatchObject({ mode: 'enforce', enabled: false, priority: 7 });
  });
});

describe('validatePolicyDocument: costs per route or method', () => {
  const costs = (...rules: Json[]) => policy({ costs: rules });

  it('accepts rules by method, path, prefix and route, and refuses each broken one by its field path', () => {
    expect(one(costs({ methods: ['POST'], paths: ['/login'], cost: 5 }, { pathPrefixes: ['/api/search/'], cost: 20 }, { routes: ['/users/:id'], cost: 2 }))).toEqual([]);
    expect(one(costs({ methods: ['POST'], cost: 0 }))).toEqual(['policies[0].costs[0].cost: must be >= 1']);
    expect(one(costs({ methods: ['POST'], cost: 1_000_001 }))).toEqual(['policies[0].costs[0].cost: must be <= 1000000']);
    expect(one(costs({ methods: ['POST'], cost: 2.5 }))).toEqual(['policies[0].costs[0].cost: must be an integer']);
    expect(one(costs({ methods: ['POST'] }))).toEqual(['policies[0].costs[0].cost: is required']);
    expect(one(costs({ cost: 5 }))).toEqual(['policies[0].costs[0]: needs at least one of methods, paths, pathPrefixes, routes: a cost for every request only rescales threshold.count']);
    expect(one(policy({ costs: [] }))).toEqual(['policies[0].costs: must have at least 1 item']);
  });

  it('holds cost paths to the normal form and glob rules of match', () => {
    expect(one(costs({ methods: ['GET'], cost: 1 }, { paths: ['/a/../login'], cost: 5 }))).toEqual([expect.stringMatching(/^policies\[0\]\.costs\[1\]\.paths\[0\]: is not in normal form/)]);
    expect(one(costs({ pathPrefixes: ['/log%69n'], cost: 5 }))).toEqual([expect.stringMatching(/^policies\[0\]\.costs\[0\]\.pathPrefixes\[0\]: is not in normal form/)]);
    expect(one(costs({ paths: [`/${'*/'.repeat(17)}x`], cost: 5 }))).toEqual([expect.stringMatching(/^policies\[0\]\.costs\[0\]\.paths\[0\]: /)]);
  });
});
