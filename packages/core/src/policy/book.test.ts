import { describe, expect, it } from 'vitest';
import type { PolicyRecord } from './record.js';
import { PolicyBook } from './book.js';

function record(id: string, definition: unknown, extra: Partial<PolicyRecord> = {}): PolicyRecord {
  return {
    id,
    version: 1,
    description: 'd',
    owner: 'o',
    mode: 'enforce',
    enabled: true,
    definition: typeof definition === 'string' ? definition : JSON.stringify(definition),
    updatedBy: 't',
    updatedAt: 0,
    ...extra,
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

  it('ignores older versions, removes on tombstones, and keeps only enabled wanted policies', () => {
    const book = new PolicyBook((p) => p.enforcement.type === 'async');
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

describe('PolicyBook.applicable', () => {
  const spec = (id: string, extra: Record<string, unknown>) => record(id, { key: ['ip'], threshold: { count: 1, interval: '1m' }, action: { type: 'throttle' }, ...extra });
  const attrs = (path: string) => ({ ip: '192.0.2.1', method: 'GET', host: 'h', path, headers: {}, timestamp: 0 });

  it('filters by match when no policies compete', () => {
    const book = new PolicyBook();
    book.apply('a', spec('a', { match: { pathPrefixes: ['/a'] } }));
    book.apply('b', spec('b', {}));
    expect(book.applicable(attrs('/a/1')).map((p) => p.id)).toEqual(['a', 'b']);
    expect(book.applicable(attrs('/z')).map((p) => p.id)).toEqual(['b']);
  });

  it('returns exactly the matching policies, in order, for every pattern of matches', () => {
    const book = new PolicyBook();
    book.apply('a', spec('a', { match: { pathPrefixes: ['/1', '/3', '/5', '/7'] } }));
    book.apply('b', spec('b', { match: { pathPrefixes: ['/2', '/3', '/6', '/7'] } }));
    book.apply('c', spec('c', { match: { pathPrefixes: ['/4', '/5', '/6', '/7'] } }));
    for (let pattern = 0; pattern < 8; pattern++) {
      const request = attrs(`/${pattern}`);
      const expected = ['a', 'b', 'c'].filter((_, bit) => (pattern & (1 << bit)) !== 0);
      expect(book.applicable(request).map((p) => p.id)).toEqual(expected);
    }
  });

  it('ranks policies of one group by priority, as applicablePolicies does', () => {
    const book = new PolicyBook();
    book.apply('low', spec('low', { group: 'g' }));
    book.apply('high', spec('high', { group: 'g', priority: 5, match: { pathPrefixes: ['/vip'] } }));
    expect(book.applicable(attrs('/vip')).map((p) => p.id)).toEqual(['high']);
    expect(book.applicable(attrs('/other')).map((p) => p.id)).toEqual(['low']);
  });
});
