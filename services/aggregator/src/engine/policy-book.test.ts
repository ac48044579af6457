import { describe, expect, it } from 'vitest';
import type { Policy } from '@banstream/schemas';
import { PolicyBook } from './policy-book.js';

function record(id: string, definition: unknown, extra: Partial<Policy> = {}): Policy {
  return {
    id, version: 1, description: 'd', owner: 'o', mode: 'enforce', enabled: true,
    definition: typeof definition === 'string' ? definition : JSON.stringify(definition), updatedBy: 't', updatedAt: 0, ...extra,
  };
}
const perIp = { key: ['ip'], threshold: { count: 10, interval: '1m' }, action: { type: 'ban', banDuration: '1h', banThreshold: { count: 20, interval: '5m' } } };

describe('PolicyBook', () => {
  it('applies valid records, with the envelope winning over the definition', () => {
    const book = new PolicyBook();
    expect(book.apply('a', record('a', { ...perIp, mode: 'preview' }))).toEqual({ kind: 'applied', id: 'a', version: 1 });
    expect(book.get('a')?.mode).toBe('enforce');
    expect(book.policies.map((p) => p.id)).toEqual(['a']);
    expect(book.longestWindowMs).toBe(5 * 60_000);
  });

  it('rejects invalid records with the path and rule, keeping the version in force', () => {
    const book = new PolicyBook();
    book.apply('a', record('a', perIp));
    const bad = book.apply('a', record('a', { ...perIp, threshold: { count: 0, interval: '1m' } }, { version: 2 }));
    expect(bad).toEqual({ kind: 'rejected', id: 'a', reason: 'threshold.count: must be > 0' });
    expect(book.get('a')?.threshold.count).toBe(10);
    expect(book.apply('b', record('b', '{nope'))).toMatchObject({ kind: 'rejected', reason: expect.stringMatching(/^definition is not JSON/) });
    expect(book.apply('c', record('c', { ...perIp, id: 'other' }))).toMatchObject({ kind: 'rejected', reason: expect.stringContaining('differs') });
    expect(book.apply('d', record('x', perIp))).toMatchObject({ kind: 'rejected', reason: expect.stringContaining('differs from its key') });
  });

  it('ignores older versions, removes on tombstones, and counts only enabled async policies', () => {
    const book = new PolicyBook();
    book.apply('a', record('a', perIp, { version: 3 }));
    expect(book.apply('a', record('a', perIp, { version: 2 }))).toEqual({ kind: 'stale', id: 'a', version: 2, held: 3 });
    book.apply('hard', record('hard', { ...perIp, action: { type: 'throttle' }, enforcement: { type: 'hard', failureMode: 'open' } }));
    book.apply('off', record('off', perIp, { enabled: false }));
    expect(book.policies.map((p) => p.id)).toEqual(['a']);
    expect(book.apply('a', null)).toEqual({ kind: 'removed', id: 'a' });
    expect(book.policies).toEqual([]);
    expect(book.longestWindowMs).toBe(0);
  });
});
