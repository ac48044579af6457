import { describe, expect, it } from 'vitest';
import { canonicalSubject } from '../routes/subjects.js';
import { parseInstant } from './instant.js';
import { jsonPointerToPath } from '@banstream/platform';

describe('request parsing', () => {
  it('writes JSON pointers as the field paths of policy files', () => {
    expect(jsonPointerToPath('/threshold/count')).toBe('threshold.count');
    expect(jsonPointerToPath('/policies/2/key/0')).toBe('policies[2].key[0]');
    expect(jsonPointerToPath('/limit', 'querystring.')).toBe('querystring.limit');
    expect(jsonPointerToPath('')).toBe('');
  });

  it('reads instants as ISO times, epoch milliseconds, or durations ago', () => {
    const now = Date.parse('2025-06-01T12:00:00Z');
    expect(parseInstant('2025-06-01T06:00:00Z', now, 'from')).toBe(now - 6 * 3_600_000);
    expect(parseInstant(String(now - 5), now, 'from')).toBe(now - 5);
    expect(parseInstant('6h', now, 'from')).toBe(now - 6 * 3_600_000);
    expect(() => parseInstant('yesterday', now, 'from')).toThrow(/from: expected an ISO 8601 time/);
  });

  it('reads subjects as operators type them', () => {
    expect(canonicalSubject(' 203.0.113.7 ')).toBe('ip:203.0.113.7');
    expect(canonicalSubject('203.0.113.0/24')).toBe('cidr:203.0.113.0/24');
    expect(canonicalSubject('2001:DB8::1/128')).toBe('ip:2001:db8::1');
    expect(canonicalSubject('user:42')).toBe('user:42');
    expect(() => canonicalSubject('planet:mars')).toThrow();
  });
});
