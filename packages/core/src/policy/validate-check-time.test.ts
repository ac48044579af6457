import { describe, expect, it } from 'vitest';
import { formatPolicyError, validatePolicyDocument } from './validate.js';

type Json = Record<string, unknown>;

const policy = (over: Json = {}): Json => ({ id: 'login', key: ['ip'], threshold: { count: 10, interval: '1m' }, action: { type: 'throttle' }, ...over });
const ban = { type: 'ban', banDuration: '1h' };
const hard = { type: 'hard', failureMode: 'closed' };

function one(p: Json): string[] {
  const r = validatePolicyDocument({ policies: [p] });
  return r.ok ? [] : r.errors.map(formatPolicyError);
}

const STATUS_KEY_FIX = 'use match.statuses or match.statusClasses to count only some responses, or action.type alert';
const HARD_STATUS = 'a hard limit counts each request when it is checked, before its response has a status';

describe('policies the enforcer can apply as written', () => {
  it.each<[string, Json, string[]]>([
    [
      'a ban keyed on the status',
      policy({ key: ['path', 'status'], action: ban }),
      [`policies[0].key[1]: status cannot be a key of a ban policy: the enforcer checks a request before its response, so it would never find the ban; ${STATUS_KEY_FIX}`],
    ],
    [
      'a throttle keyed on the status class',
      policy({ key: ['status_class'] }),
      [`policies[0].key[0]: status_class cannot be a key of a throttle policy: the enforcer checks a request before its response, so it would never find the count; ${STATUS_KEY_FIX}`],
    ],
    ['a hard limit keyed on the status', policy({ key: ['ip', 'status'], enforcement: hard }), [`policies[0].key[1]: status cannot be a key with enforcement.type hard: ${HARD_STATUS}`]],
    [
      'a hard alert keyed on the status class',
      policy({ key: ['status_class'], action: { type: 'alert' }, enforcement: hard }),
      [`policies[0].key[0]: status_class cannot be a key with enforcement.type hard: ${HARD_STATUS}`],
    ],
    [
      'a hard limit on some statuses',
      policy({ match: { paths: ['/login'], statuses: [401], statusClasses: ['5xx'] }, enforcement: hard }),
      [
        `policies[0].match.statuses: cannot be used with enforcement.type hard: ${HARD_STATUS}; use enforcement.type async to count only some responses`,
        `policies[0].match.statusClasses: cannot be used with enforcement.type hard: ${HARD_STATUS}; use enforcement.type async to count only some responses`,
      ],
    ],
    [
      'an async policy on a credential header',
      policy({
        match: {
          headers: [
            { name: 'user-agent', contains: 'curl' },
            { name: 'Authorization', present: false },
          ],
        },
      }),
      [
        'policies[0].match.headers[1].name: authorization cannot be matched by an async policy: events never carry credentials, so the aggregator that counts it never sees this header; use enforcement.type hard, or key on apikey or user',
      ],
    ],
    [
      'a header pattern with lookahead',
      policy({ match: { headers: [{ name: 'user-agent', matches: 'curl(?=/8)' }] } }),
      ['policies[0].match.headers[0].matches: is not a valid RE2 regular expression: invalid or unsupported Perl syntax: `(?=`: lookahead and lookbehind cannot run in linear time'],
    ],
    [
      'a header pattern with a backreference',
      policy({ match: { headers: [{ name: 'x-a', matches: '(ab)\\1' }] } }),
      ['policies[0].match.headers[0].matches: is not a valid RE2 regular expression: invalid escape sequence: `\\1`: backreferences cannot run in linear time'],
    ],
    [
      'a header pattern too large to run',
      policy({ match: { headers: [{ name: 'x-a', matches: '[a-z]{700}' }] } }),
      [
        'policies[0].match.headers[0].matches: compiles to 702 instructions, more than the 600 a header pattern may use (matching time grows with them; a counted repetition such as {100} makes one per repeat)',
      ],
    ],
    [
      'an unterminated group',
      policy({ match: { headers: [{ name: 'user-agent', matches: '(bot' }] } }),
      ['policies[0].match.headers[0].matches: is not a valid RE2 regular expression: missing closing ): `(bot`'],
    ],
    [
      'a glob with too many wildcards',
      policy({ match: { paths: ['/a', `${'/*'.repeat(17)}`] } }),
      ['policies[0].match.paths[1]: has 17 wildcards, more than the 16 a glob may have (each one is another pass over the path)'],
    ],
    ['a glob too long', policy({ match: { paths: [`/${'a'.repeat(512)}`] } }), ['policies[0].match.paths[0]: must be at most 512 characters']],
  ])('refuses %s, naming the field and the reason', (_name, p, expected) => {
    expect(one(p)).toEqual(expected);
  });

  it.each<[string, Json]>([
    ['a ban on failed logins keyed on the path', policy({ key: ['path'], match: { paths: ['/login'], statuses: [401] }, action: ban })],
    ['a ban on failed logins keyed on the address and path', policy({ key: ['ip', 'path'], match: { statusClasses: ['4xx'] }, action: ban })],
    ['a throttle from counts of server errors', policy({ key: ['header:user-agent'], match: { statusClasses: ['5xx'] } })],
    ['an alert keyed on the status', policy({ key: ['path', 'status'], action: { type: 'alert' } })],
    ['a hard limit on a credential header', policy({ match: { headers: [{ name: 'authorization', present: false }] }, enforcement: hard })],
    ['a case-insensitive RE2 pattern and a 16-wildcard glob', policy({ match: { headers: [{ name: 'user-agent', matches: '(?i)^(curl|wget)/' }], paths: ['/*'.repeat(16)] } })],
  ])('accepts %s', (_name, p) => {
    expect(one(p)).toEqual([]);
  });
});
