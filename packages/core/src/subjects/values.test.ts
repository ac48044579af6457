import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_SUBJECT_VALUE_BYTES, boundValue, escapeValue, hashApiKey, hashValue, isHashedValue, normaliseApiKeyHash, unescapeValue } from './values.js';

describe('boundValue', () => {
  it('treats empty and absent values as missing', () => {
    expect(boundValue('')).toBeUndefined();
    expect(boundValue(undefined)).toBeUndefined();
    expect(boundValue(null)).toBeUndefined();
  });

  it('keeps short plain values as they are (the same string)', () => {
    const value = 'Mozilla/5.0 (X11; Linux x86_64) façade/1';
    expect(boundValue(value)).toBe(value);
    expect(boundValue('/users/:id')).toBe('/users/:id');
  });

  it('percent-encodes the separator, the escape and control characters', () => {
    expect(boundValue('a|b')).toBe('a%7Cb');
    expect(boundValue('100%')).toBe('100%25');
    expect(boundValue('line\r\nbreak\x00\x7f\x85')).toBe('line%0D%0Abreak%00%7F%85');
  });

  it('encodes the colon of a leading h: so no plain value passes for a digest', () => {
    const digest = hashValue('x'.repeat(500));
    expect(boundValue(digest)).toBe(`h%3A${digest.slice(2)}`);
    expect(boundValue('h:')).toBe('h%3A');
    expect(boundValue('hh:')).toBe('hh:');
  });

  it('hashes values over the limit: deterministic, bounded, distinct', () => {
    const long = 'A'.repeat(MAX_SUBJECT_VALUE_BYTES + 1);
    const hashed = boundValue(long)!;
    expect(hashed).toBe(`h:${createHash('sha256').update(long).digest().subarray(0, 16).toString('base64url')}`);
    expect(hashed).toHaveLength(24);
    expect(isHashedValue(hashed)).toBe(true);
    expect(boundValue(long)).toBe(hashed);
    expect(boundValue(`${long}B`)).not.toBe(hashed);
    expect(boundValue('x'.repeat(1_000_000))).toHaveLength(24);
    expect(boundValue('A'.repeat(MAX_SUBJECT_VALUE_BYTES))).toBe('A'.repeat(MAX_SUBJECT_VALUE_BYTES));
  });

  it('hashValue is base64url of the first 16 bytes of SHA-256, for any value', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (raw) => {
        expect(hashValue(raw)).toBe(`h:${createHash('sha256').update(raw, 'utf8').digest().subarray(0, 16).toString('base64url')}`);
      }),
      { numRuns: 2000 },
    );
  });

  it('counts UTF-8 bytes, not characters', () => {
    expect(boundValue('€'.repeat(42))).toBe('€'.repeat(42)); // 126 bytes
    expect(isHashedValue(boundValue('€'.repeat(43))!)).toBe(true); // 129 bytes
  });

  it('counts the escaped length: escaping cannot push a value past the bound', () => {
    expect(boundValue('|'.repeat(42))).toBe('%7C'.repeat(42)); // 126 bytes
    expect(isHashedValue(boundValue('|'.repeat(43))!)).toBe(true);
  });

  it('honours another limit', () => {
    expect(isHashedValue(boundValue('abcdef', 5)!)).toBe(true);
    expect(boundValue('abcde', 5)).toBe('abcde');
  });

  it('always gives a value within the bound, without | and control characters, and reversible unless hashed', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom('|', '%', 'h', ':', '\n', '\x85'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 200 }), (raw) => {
        const value = boundValue(raw);
        if (raw.length === 0) {
          expect(value).toBeUndefined();
          return;
        }
        expect(Buffer.byteLength(value!)).toBeLessThanOrEqual(MAX_SUBJECT_VALUE_BYTES);
        expect(value).not.toMatch(/[|\x00-\x1f\x7f-\x9f]/);
        if (isHashedValue(value!)) expect(value).toBe(hashValue(raw));
        else expect(unescapeValue(value!)).toBe(raw);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('escapeValue and unescapeValue', () => {
  it('are inverse', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (raw) => {
        expect(unescapeValue(escapeValue(raw))).toBe(raw);
      }),
    );
  });

  it('refuse escapes escapeValue never writes', () => {
    expect(unescapeValue('a%7cb')).toBe('a|b');
    expect(unescapeValue('%3A')).toBe(':');
    expect(unescapeValue('%4')).toBeUndefined();
    expect(unescapeValue('%zz')).toBeUndefined();
    expect(unescapeValue('%41')).toBeUndefined();
    expect(unescapeValue('caf%C3%A9')).toBeUndefined();
  });
});

describe('API keys', () => {
  it('hashApiKey is the hex SHA-256 the edge puts in apiKeyHash', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashApiKey('clé')).toBe(createHash('sha256').update(Buffer.from('clé', 'utf8')).digest('hex'));
  });

  it('normaliseApiKeyHash lower-cases a hex SHA-256 and refuses anything else', () => {
    const hash = hashApiKey('k');
    expect(normaliseApiKeyHash(hash.toUpperCase())).toBe(hash);
    expect(normaliseApiKeyHash(hash.slice(1))).toBeUndefined();
    expect(normaliseApiKeyHash(`${hash.slice(1)}g`)).toBeUndefined();
  });
});
