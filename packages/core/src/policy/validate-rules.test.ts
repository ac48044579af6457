import { describe, expect, it } from 'vitest';
import { parseDimension, parseKey } from '../subjects/index.js';
import { formatPolicyError, validatePolicyDocument } from './validate.js';
import { isIsoDateTime } from './validate-rules.js';

type Json = Record<string, unknown>;

const policy = (over: Json = {}): Json => ({
  id: 'login',
  key: ['ip'],
  threshold: { count: 10, interval: '1m' },
  action: { type: 'throttle' },
  ...over,
});
const ban = (over: Json = {}) => ({ type: 'ban', banDuration: '1h', ...over });
const hard = (over: Json = {}) => ({ type: 'hard', failureMode: 'closed', ...over });
const escalation = (over: Json = {}) => ({ multiplier: 2, maxDuration: '7d', decayAfter: '30d', ...over });
const schedule = (over: Json = {}) => ({ timeZone: 'Europe/Paris', from: '22:00', to: '06:00', ...over });

function lines(doc: unknown): string[] {
  const r = validatePolicyDocument(doc);
  return r.ok ? [] : r.errors.map(formatPolicyError);
}
const one = (p: Json) => lines({ policies: [p] });
const thrown = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a throw');
};

describe('cross-field rules', () => {
  it.each<[string, Json, string[]]>([
    ['hard needs a failure mode', policy({ enforcement: { type: 'hard' } }), ['policies[0].enforcement.failureMode: is required when enforcement.type is hard (one of open, closed, local)']],
    ['async has no algorithm', policy({ enforcement: { type: 'async', algorithm: 'sliding-log' } }), ['policies[0].enforcement.algorithm: is only allowed when enforcement.type is hard']],
    ['token bucket needs burst', policy({ enforcement: hard({ algorithm: 'token-bucket' }) }), ['policies[0].threshold.burst: is required when enforcement.algorithm is token-bucket']],
    [
      'burst needs a hard token bucket',
      policy({ threshold: { count: 5, interval: '1s', burst: { size: 10, refillPerSecond: 5 } } }),
      ['policies[0].threshold.burst: is only allowed with enforcement.type hard and enforcement.algorithm token-bucket'],
    ],
    [
      'burst with a hard sliding window',
      policy({ enforcement: hard(), threshold: { count: 5, interval: '1s', burst: { size: 10, refillPerSecond: 5 } } }),
      ['policies[0].threshold.burst: is only allowed with enforcement.type hard and enforcement.algorithm token-bucket'],
    ],
    [
      'no hard bans',
      policy({ action: ban(), enforcement: hard() }),
      [
        'policies[0].action.type: ban is not supported with enforcement.type hard: bans are decided by the aggregator from shared counts; use enforcement.type async, or action.type throttle for a hard limit',
      ],
    ],
    ['interval at least 1s', policy({ threshold: { count: 1, interval: '500ms' } }), ['policies[0].threshold.interval: must be between 1s and 30d']],
    ['interval at most 30d', policy({ threshold: { count: 1, interval: '31d' } }), ['policies[0].threshold.interval: must be between 1s and 30d']],
    ['interval too large to count', policy({ threshold: { count: 1, interval: '999999999999999999d' } }), ['policies[0].threshold.interval: must be between 1s and 30d']],
    ['banDuration at least 1s', policy({ action: ban({ banDuration: '999ms' }) }), ['policies[0].action.banDuration: must be between 1s and 365d']],
    ['banDuration at most 365d', policy({ action: ban({ banDuration: '366d' }) }), ['policies[0].action.banDuration: must be between 1s and 365d']],
    ['banThreshold interval', policy({ action: ban({ banThreshold: { count: 100, interval: '31d' } }) }), ['policies[0].action.banThreshold.interval: must be between 1s and 30d']],
    [
      'banThreshold below threshold',
      policy({ action: ban({ banThreshold: { count: 5, interval: '60s' } }) }),
      ['policies[0].action.banThreshold.count: must be >= threshold.count (10) when the intervals are equal: a ban cannot trigger below the rate limit'],
    ],
    ['escalation needs a ban', policy({ escalation: escalation() }), ['policies[0].escalation: is only allowed when action.type is ban']],
    [
      'escalation cap below the ban',
      policy({ action: ban({ banDuration: '1d' }), escalation: escalation({ maxDuration: '12h' }) }),
      ['policies[0].escalation.maxDuration: must be >= action.banDuration (1d)'],
    ],
    ['escalation cap at most 365d', policy({ action: ban(), escalation: escalation({ maxDuration: '400d' }) }), ['policies[0].escalation.maxDuration: must be between 1s and 365d']],
    ['escalation decay at most 365d', policy({ action: ban(), escalation: escalation({ decayAfter: '366d' }) }), ['policies[0].escalation.decayAfter: must be between 1s and 365d']],
    ['time zone', policy({ schedule: schedule({ timeZone: 'Europe/Pariss' }) }), ['policies[0].schedule.timeZone: unknown time zone "Europe/Pariss": must be an IANA name such as Europe/Paris']],
    ['offset is not a zone', policy({ schedule: schedule({ timeZone: '+02:00' }) }), ['policies[0].schedule.timeZone: unknown time zone "+02:00": must be an IANA name such as Europe/Paris']],
    ['empty window', policy({ schedule: schedule({ from: '09:00', to: '09:00' }) }), ['policies[0].schedule.to: must differ from schedule.from (the window would be empty)']],
    ['24:30 is no time', policy({ schedule: schedule({ from: '09:00', to: '24:30' }) }), ['policies[0].schedule.to: must be a local time HH:MM from 00:00 to 24:00']],
    ['header without a test', policy({ match: { headers: [{ name: 'user-agent' }] } }), ['policies[0].match.headers[0]: needs exactly one of present, equals, contains, matches (none given)']],
    [
      'header with two tests',
      policy({ match: { headers: [{ name: 'user-agent', equals: 'curl', contains: 'bot' }] } }),
      ['policies[0].match.headers[0]: needs exactly one of present, equals, contains, matches (found equals, contains)'],
    ],
    [
      'header regex',
      policy({ match: { headers: [{ name: 'user-agent', matches: '(bot' }] } }),
      ['policies[0].match.headers[0].matches: is not a valid RE2 regular expression: missing closing ): `(bot`'],
    ],
  ])('%s', (_name, p, expected) => {
    expect(one(p)).toEqual(expected);
  });

  it('reports a duplicate id against the first policy that used it', () => {
    const doc = { policies: [policy({ id: 'a' }), policy(), policy({ id: 'b' }), policy(), policy()] };
    expect(lines(doc)).toEqual(['policies[3].id: duplicate of policies[1].id "login"', 'policies[4].id: duplicate of policies[1].id "login"']);
  });

  it('accepts equal thresholds, longer ban intervals, and ban caps at the ban length', () => {
    expect(one(policy({ action: ban({ banThreshold: { count: 10, interval: '1m' } }) }))).toEqual([]);
    expect(one(policy({ action: ban({ banThreshold: { count: 5, interval: '1h' } }) }))).toEqual([]);
    expect(one(policy({ action: ban({ banDuration: '1d' }), escalation: escalation({ maxDuration: '24h' }) }))).toEqual([]);
    expect(one(policy({ threshold: { count: 1, interval: '30d' }, action: ban({ banDuration: '365d' }) }))).toEqual([]);
    expect(one(policy({ threshold: { count: 1, interval: 1 } }))).toEqual([]);
  });

  it('accepts statuses and status classes together, and single header tests', () => {
    const match = {
      statuses: [401, 403],
      statusClasses: ['5xx'],
      headers: [
        { name: 'x-bot', present: false },
        { name: 'user-agent', matches: '^curl/' },
        { name: 'accept', equals: '' },
      ],
    };
    expect(one(policy({ match }))).toEqual([]);
  });

  it('accepts a hard token bucket with a burst, and 24:00 as the end of the day', () => {
    const p = policy({
      enforcement: hard({ algorithm: 'token-bucket', failureMode: 'local' }),
      threshold: { count: 5, interval: '1s', burst: { size: 20, refillPerSecond: 5 } },
      schedule: schedule({ from: '18:00', to: '24:00', days: ['sat', 'sun'] }),
    });
    expect(one(p)).toEqual([]);
  });

  it('reports key dimensions in the words of the subjects module', () => {
    expect(one(policy({ key: ['ip', 'xyz', 'header:authorization'] }))).toEqual([
      `policies[0].key[1]: ${thrown(() => parseDimension('xyz'))}`,
      `policies[0].key[2]: ${thrown(() => parseDimension('header:authorization'))}`,
    ]);
    expect(one(policy({ key: ['prefix', 'prefix/20'] }))).toEqual([`policies[0].key: ${thrown(() => parseKey(['prefix', 'prefix/20']))}`]);
    expect(one(policy({ key: ['ip', 'header:user-agent', 'prefix/20,48', 'country'] }))).toEqual([]);
  });

  it('refuses a denying policy keyed on a network wider than /8 (IPv4) or /32 (IPv6), and lets an alert count it', () => {
    expect(one(policy({ key: ['prefix/0'] }))).toEqual([expect.stringMatching(/^policies\[0\]\.key\[0\]: IPv4 \/0 or IPv6 \/64 counts too wide a network/)]);
    expect(one(policy({ key: ['prefix/24,16'] }))).toEqual([expect.stringMatching(/^policies\[0\]\.key\[0\]: IPv4 \/24 or IPv6 \/16 counts too wide/)]);
    expect(one(policy({ key: ['prefix/8,32'] }))).toEqual([]);
    expect(one(policy({ key: ['prefix/0'], action: { type: 'alert' } }))).toEqual([]);
  });

  it('keeps one error per path: the schema rule over the cross-field rule', () => {
    expect(one(policy({ key: ['ip', 'ip'] }))).toEqual(['policies[0].key: must not repeat items']);
  });

  it('applies cross-field rules even when the schema fails elsewhere', () => {
    expect(one(policy({ mode: 'on', enforcement: { type: 'hard' } }))).toEqual([
      'policies[0].mode: must be one of enforce, preview',
      'policies[0].enforcement.failureMode: is required when enforcement.type is hard (one of open, closed, local)',
    ]);
  });
});

describe('paths in normal form', () => {
  const match = (m: Json) => policy({ match: m });
  const why = (normal: string) =>
    `is not in normal form: requests are matched by their normalised path (escapes decoded but those of / ? # % ; : @ & = + $ , which are upper-cased, dot segments removed, runs of / merged, no query), in which this is "${normal}"`;

  it('refuses paths, globs and prefixes that normalising would change, saying what requests are matched as', () => {
    expect(one(match({ paths: ['/log%69n', '/api/**/../admin', '/a%2fb', '/login?x=1'], pathPrefixes: ['//admin/', '/a/./b'] }))).toEqual([
      `policies[0].match.paths[0]: ${why('/login')}`,
      `policies[0].match.paths[1]: ${why('/api/admin')}`,
      `policies[0].match.paths[2]: ${why('/a%2Fb')}`,
      `policies[0].match.paths[3]: ${why('/login')}`,
      `policies[0].match.pathPrefixes[0]: ${why('/admin/')}`,
      `policies[0].match.pathPrefixes[1]: ${why('/a/b')}`,
    ]);
  });

  it('accepts paths in normal form, globs and escapes of delimiters included', () => {
    expect(one(match({ paths: ['/login', '/api/*/items', '/**/admin', '/a%2Fb', '/.well-known/**', '/a!b'], pathPrefixes: ['/admin/', '/a..b'] }))).toEqual([]);
  });
});

describe('allowlist rules', () => {
  const allow = (...allowlist: Json[]) => lines({ policies: [], allowlist });

  it('requires expiresAt to be an ISO 8601 date-time with a zone', () => {
    for (const bad of ['tomorrow', '2026-02-30T00:00:00Z', '2026-12-31', '2026-12-31T10:00:00', '2026-12-31T24:00:00Z']) {
      expect(allow({ entry: '10.0.0.1', expiresAt: bad })).toEqual(['allowlist[0].expiresAt: must be an ISO 8601 date-time with a zone, such as 2026-12-31T23:59:59Z']);
    }
    expect(allow({ entry: '10.0.0.1', expiresAt: '2026-12-31T23:59:59Z' }, { entry: '10.0.0.2', expiresAt: '2026-12-31T23:59:59.250+02:00' })).toEqual([]);
    expect(isIsoDateTime('2028-02-29T00:00Z')).toBe(true);
    expect(isIsoDateTime('2027-02-29T00:00Z')).toBe(false);
  });

  it('requires an IP, a CIDR or a subject', () => {
    expect(allow({ entry: '203.0.113.7' }, { entry: '10.0.0.0/8' }, { entry: '2001:db8::/32' }, { entry: 'user:42' }, { entry: 'cidr:10.0.0.0/8' })).toEqual([]);
    expect(allow({ entry: 'nope' })).toEqual(['allowlist[0].entry: must be an IP, a CIDR or a subject such as user:42 ("nope" is not scope:value)']);
  });

  it('reports a repeated entry, which would replace the first in the compacted topic', () => {
    expect(allow({ entry: 'user:42' }, { entry: 'user:7' }, { entry: 'user:42' })).toEqual(['allowlist[2].entry: duplicate of allowlist[0].entry "user:42"']);
  });
});
