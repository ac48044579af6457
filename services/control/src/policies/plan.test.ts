import { describe, expect, it } from 'vitest';
import { diffJson } from './diff.js';
import { planApply } from './plan.js';
import { checkPolicy, nextRecord, specOfRecord } from './records.js';
import type { PolicyRecord } from '@banstream/schemas';

const spec = (over: Record<string, unknown> = {}) => {
  const checked = checkPolicy({ id: 'login', key: ['ip'], threshold: { count: 20, interval: '1m' }, action: { type: 'ban', banDuration: '1h' }, ...over });
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.spec;
};

describe('checkPolicy', () => {
  it('applies the defaults: a new policy is a preview', () => {
    expect(spec()).toMatchObject({ mode: 'preview', enabled: true, priority: 0 });
  });

  it('names every bad field by its path in the body', () => {
    const checked = checkPolicy({ id: 'Bad Id', key: [], threshold: { count: 0, interval: '1m' }, action: { type: 'ban' } });
    expect(checked.ok).toBe(false);
    const paths = checked.ok ? [] : checked.errors.map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['id', 'key', 'threshold.count', 'action.banDuration']));
    const inFile = checkPolicy({ id: 'x', key: ['ip'], threshold: { count: 0, interval: '1m' }, action: { type: 'throttle' } }, 'policies[3].');
    expect(inFile.ok ? [] : inFile.errors).toEqual([{ path: 'policies[3].threshold.count', message: 'must be > 0' }]);
  });
});

describe('records', () => {
  it('reads back the spec it wrote, with the version one up and the author', () => {
    const first = nextRecord(spec({ description: 'd' }), undefined, 'alice', 1000);
    expect(first).toMatchObject({ id: 'login', version: 1, mode: 'preview', description: 'd', owner: '', updatedBy: 'alice', updatedAt: 1000 });
    expect(specOfRecord(first)).toEqual(spec({ description: 'd' }));
    expect(nextRecord(spec({ mode: 'enforce' }), first, 'bob', 2000)).toMatchObject({ version: 2, mode: 'enforce', updatedBy: 'bob' });
  });
});

describe('planApply', () => {
  const current = new Map<string, PolicyRecord>([
    ['login', nextRecord(spec(), undefined, 'a', 1)],
    ['old', nextRecord(spec({ id: 'old' }), undefined, 'a', 1)],
  ]);

  it('creates, updates with the changed fields, and leaves equal policies alone', () => {
    const plan = planApply(current, [spec({ threshold: { count: 30, interval: '1m' }, mode: 'enforce' }), spec({ id: 'new' })], false);
    expect(plan.map((c) => [c.id, c.action])).toEqual([
      ['login', 'update'],
      ['new', 'create'],
    ]);
    expect(plan[0]).toMatchObject({
      fields: [
        { path: 'mode', before: 'preview', after: 'enforce' },
        { path: 'threshold.count', before: 20, after: 30 },
      ],
    });
    expect(planApply(current, [spec()], false)).toEqual([{ id: 'login', action: 'unchanged', version: 1 }]);
  });

  it('deletes what the set leaves out only when pruning', () => {
    expect(planApply(current, [spec()], true).map((c) => c.action)).toEqual(['unchanged', 'delete']);
  });
});

describe('diffJson', () => {
  it('lists added, removed and changed leaves; arrays whole', () => {
    expect(diffJson({ a: 1, b: { c: [1] }, d: 1 }, { a: 1, b: { c: [2] }, e: 'x' })).toEqual([
      { path: 'b.c', before: [1], after: [2] },
      { path: 'd', before: 1 },
      { path: 'e', after: 'x' },
    ]);
  });
});
