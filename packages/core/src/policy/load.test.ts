import { describe, expect, it } from 'vitest';
import { BanstreamError } from '../errors.js';
import { findJsonProblem, lineColumn } from './load-json.js';
import { parsePolicyText, type PolicyTextFormat } from './load.js';
import type { PolicyError } from './validate.js';

/** The policies a security team would start with; one per kind of rule. */
const POLICIES_YAML = `# banstream policies for shop.example.com
policies:
  # Brute force: only failed logins count (401/403), repeat offenders are banned longer.
  - id: login-bruteforce
    description: Failed logins per IP
    owner: security@example.com
    mode: enforce
    match:
      methods: [POST]
      paths: [/login, /api/*/login]
      statuses: [401, 403]
    key: [ip]
    threshold: { count: 10, interval: 5m }
    action:
      type: ban
      status: 403
      banThreshold: { count: 30, interval: 5m }
      banDuration: 1h
    escalation: { multiplier: 4, maxDuration: 7d, decayAfter: 30d }

  # Per-IP API throttle, with a larger allowance for one merchant in the same group.
  - id: api-per-ip
    group: api
    priority: 0
    match: { pathPrefixes: [/api/] }
    key: [ip]
    threshold: { count: 600, interval: 1m }
    action: { type: throttle, status: 429 }
  - id: api-merchant-42
    group: api
    priority: 10
    match:
      pathPrefixes: [/api/]
      headers: [{ name: x-merchant-id, equals: "42" }]
    key: [header:x-merchant-id]
    threshold: { count: 6000, interval: 1m }
    action: { type: throttle }

  # Sign-ups: a hard limit Redis enforces exactly; an in-process limit if Redis is down.
  - id: signup-per-ip
    mode: enforce
    match: { methods: [POST], paths: [/signup] }
    key: [prefix]
    threshold: { count: 5, interval: 1d }
    action: { type: throttle, status: 429 }
    enforcement: { type: hard, failureMode: local, algorithm: sliding-log }

  # At night, checkout traffic from outside the EU is watched closely.
  - id: night-checkout-non-eu
    match:
      paths: [/checkout/**]
      countries: [US, CN, RU]
    key: [country, ip]
    threshold: { count: 20, interval: 10m }
    action: { type: alert }
    schedule: { timeZone: Europe/Paris, days: [fri, sat], from: "22:00", to: "06:00" }

allowlist:
  - entry: 10.0.0.0/8
    reason: our own infrastructure
  - entry: user:42
    addedBy: alice
    expiresAt: 2026-12-31T23:59:59Z
`;

function failure(text: string, format: PolicyTextFormat = 'auto', options = {}): { message: string; errors: PolicyError[] } {
  try {
    parsePolicyText(text, format, options);
  } catch (err) {
    expect(err).toBeInstanceOf(BanstreamError);
    const e = err as BanstreamError;
    expect(e.code).toBe('POLICY_INVALID');
    return { message: e.message, errors: e.details.errors as PolicyError[] };
  }
  throw new Error('expected POLICY_INVALID');
}

describe('parsePolicyText: YAML', () => {
  it('reads a realistic document with several kinds of policies', () => {
    const doc = parsePolicyText(POLICIES_YAML, 'yaml');
    expect(doc.policies.map((p) => p.id)).toEqual(['login-bruteforce', 'api-per-ip', 'api-merchant-42', 'signup-per-ip', 'night-checkout-non-eu']);
    const [login, perIp, merchant, signup, night] = doc.policies;
    expect(login?.match?.statuses).toEqual([401, 403]);
    expect(login?.action).toEqual({ type: 'ban', status: 403, banThreshold: { count: 30, interval: '5m' }, banDuration: '1h' });
    expect(merchant?.priority).toBeGreaterThan(perIp?.priority ?? 0);
    expect(merchant?.group).toBe(perIp?.group);
    expect(signup?.enforcement).toEqual({ type: 'hard', failureMode: 'local', algorithm: 'sliding-log' });
    expect(night?.schedule).toEqual({ timeZone: 'Europe/Paris', days: ['fri', 'sat'], from: '22:00', to: '06:00' });
    expect(perIp?.mode).toBe('preview'); // the default: new policies are dry runs
    expect(doc.allowlist?.[1]?.expiresAt).toBe('2026-12-31T23:59:59Z');
  });

  it('reports an unknown top-level field with its line', () => {
    const { errors } = failure(`${POLICIES_YAML}defaults:\n  key: [ip]\n`);
    expect(errors).toEqual([{ path: 'defaults', message: 'unknown field', line: POLICIES_YAML.split('\n').length, column: 1 }]);
  });

  it('allows anchors, aliases and merge keys, so policies can share a block', () => {
    const text = `policies:
  - id: a
    <<: &base
      key: [ip]
      threshold: &per-minute { count: 10, interval: 1m }
      action: { type: throttle }
  - id: b
    <<: *base
    key: [user]
  - { <<: *base, id: c, threshold: *per-minute }
`;
    const doc = parsePolicyText(text, 'yaml');
    expect(doc.policies.map((p) => [p.id, p.key, p.threshold])).toEqual([
      ['a', ['ip'], { count: 10, interval: '1m' }],
      ['b', ['user'], { count: 10, interval: '1m' }],
      ['c', ['ip'], { count: 10, interval: '1m' }],
    ]);
  });

  it('lists every validation error with its path and line in the message', () => {
    const text = `policies:
  - id: a
    key: [ip]
    threshold: { count: 0, interval: 1m }
    action: { type: throttle }
  - id: a
    key: [ip]
    treshold: { count: 1, interval: 1m }
    action: { type: ban }
`;
    const { message, errors } = failure(text);
    expect(message).toBe(
      [
        'policy text is invalid (5 errors):',
        '  policies[0].threshold.count: must be > 0 (line 4, column 18)',
        '  policies[1].threshold: is required (line 6, column 5)',
        '  policies[1].treshold: unknown field (did you mean "threshold"?) (line 8, column 5)',
        '  policies[1].action.banDuration: is required (line 9, column 5)', // a missing field points at its parent
        '  policies[1].id: duplicate of policies[0].id "a" (line 6, column 5)',
      ].join('\n'),
    );
    expect(errors.map((e) => `${e.path}: ${e.message}`)).toContain('policies[0].threshold.count: must be > 0');
  });

  it('reports syntax errors with line and column', () => {
    const { message, errors } = failure('policies:\n  - id: a\n    key: [ip\n  - id: b\n', 'yaml');
    expect(message).toMatch(/^policy text is not valid YAML:\n {2}line \d+, column \d+: /);
    expect(errors[0]).toMatchObject({ line: expect.any(Number), column: expect.any(Number) });
    expect(failure('policies: []\npolicies: []\n').errors).toEqual([{ path: 'line 2, column 1', message: 'Map keys must be unique', line: 2, column: 1 }]);
  });

  it('refuses several YAML documents in one text', () => {
    expect(failure('policies: []\n---\npolicies: []\n').message).toBe('policy text is not valid YAML:\n  line 2, column 1: a policy text holds one YAML document: remove the "---" or split the file');
  });

  it('stops alias bombs', () => {
    const rows = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (const [name, prev] of [
      ['b', 'a'],
      ['c', 'b'],
      ['d', 'c'],
      ['e', 'd'],
    ])
      rows.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(', ')}]`);
    expect(failure(rows.join('\n')).message).toMatch(/^policy text is not valid YAML: .*resource exhaustion.*\(more than 100 alias expansions\)$/);
  });
});

describe('parsePolicyText: shapes', () => {
  const single = `id: login
key: [ip]
threshold: { count: 0, interval: 1m }
action: { type: throttle }
`;

  it('reads one policy on its own and reports paths as written', () => {
    expect(parsePolicyText(single.replace('count: 0', 'count: 5')).policies[0]?.id).toBe('login');
    expect(failure(single).errors).toEqual([{ path: 'threshold.count', message: 'must be > 0', line: 3, column: 14 }]);
  });

  it('reads a list of policies and reports paths as written', () => {
    const list = `- ${single.replace(/\n(?=.)/g, '\n  ')}- ${single.replace(/\n(?=.)/g, '\n  ').replace('count: 0', 'count: 1')}`;
    expect(failure(list).errors.map((e) => `${e.path}: ${e.message}`)).toEqual(['[0].threshold.count: must be > 0', '[1].id: duplicate of [0].id "login"']);
  });

  it('refuses empty text and text over the size limit', () => {
    expect(failure('').message).toBe('policy text is empty');
    expect(failure('# nothing\n').message).toBe('policy text is empty');
    expect(failure(`policies: []\n${'#'.repeat(2 * 1024 * 1024)}`).message).toBe('policy text is too large: 2097165 bytes, the limit is 1048576 bytes');
    expect(failure('policies: [] # é', 'yaml', { maxBytes: 16 }).message).toBe('policy text is too large: 17 bytes, the limit is 16 bytes');
  });

  it('ignores a byte order mark', () => {
    expect(parsePolicyText('\ufeff{"policies": []}', 'json')).toEqual({ policies: [] });
  });
});

describe('parsePolicyText: JSON', () => {
  const json = JSON.stringify({ policies: [{ id: 'a', key: ['ip'], threshold: { count: 5, interval: 60 }, action: { type: 'throttle' } }] }, null, 2);

  it('reads JSON, explicitly or detected', () => {
    expect(parsePolicyText(json, 'json').policies[0]?.threshold.interval).toBe(60);
    expect(parsePolicyText(json, 'auto')).toEqual(parsePolicyText(json, 'json'));
  });

  it('reports validation errors without lines', () => {
    expect(failure(json.replace('"count": 5', '"count": -5'), 'json').errors).toEqual([{ path: 'policies[0].threshold.count', message: 'must be > 0' }]);
  });

  it('reports syntax errors with line and column', () => {
    expect(failure('{\n  "policies": [\n    {"id": "a",}\n  ]\n}', 'json').message).toBe('policy text is not valid JSON:\n  line 3, column 16: unexpected "}", expected a double-quoted property name');
    expect(failure('{"policies": [}', 'auto').errors).toEqual([{ path: 'line 1, column 15', message: 'unexpected "}", expected a value', line: 1, column: 15 }]);
    expect(failure('{"a": tru}', 'json').errors[0]?.path).toBe('line 1, column 7');
  });

  it('refuses duplicate keys, as YAML does', () => {
    expect(failure('{"policies": [], "policies": []}', 'json').message).toBe('policy text is not valid JSON:\n  line 1, column 18: duplicate key "policies"');
  });

  it('falls back to YAML flow syntax in auto mode', () => {
    expect(parsePolicyText('{policies: []}', 'auto')).toEqual({ policies: [] });
    expect(() => parsePolicyText('{policies: []}', 'json')).toThrow(/not valid JSON/);
  });
});

describe('findJsonProblem', () => {
  it('accepts what JSON.parse accepts', () => {
    for (const text of ['0', '-1.5e+3', '"a\\u00e9\\n"', '[]', '{}', ' [1, "x", true, false, null, {"a": [{}]}] ', '{"a":1,"b":{"a":1}}']) {
      expect(findJsonProblem(text)).toBeUndefined();
      expect(() => JSON.parse(text)).not.toThrow();
    }
  });

  it('finds what JSON.parse refuses', () => {
    for (const text of ['', '01', '[1,]', '{"a" 1}', '"\t"', '"\\x"', '[1] 2', 'NaN', "{'a': 1}", '"abc']) {
      expect(findJsonProblem(text)).toBeDefined();
      expect(() => JSON.parse(text)).toThrow();
    }
    expect(findJsonProblem(`${'['.repeat(200)}${']'.repeat(200)}`)?.message).toBe('nested deeper than 128 levels');
  });

  it('turns offsets into 1-based lines and columns', () => {
    expect(lineColumn('ab\ncd\n', 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn('ab\ncd\n', 4)).toEqual({ line: 2, column: 2 });
    expect(lineColumn('ab\ncd\n', 6)).toEqual({ line: 3, column: 1 });
  });
});
