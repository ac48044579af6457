import { describe, expect, it } from 'vitest';
import type { PolicySpec } from '@banstream/core';
import { renderPlan } from './plan.js';

describe('renderPlan', () => {
  it('shows what each policy gains or loses and sums it up', () => {
    const text = renderPlan(
      [
        { id: 'api', action: 'create', after: { id: 'api', mode: 'preview', key: ['apikey'], threshold: { count: 100, interval: '1m' }, action: { type: 'throttle' } } as PolicySpec },
        {
          id: 'login',
          action: 'update',
          version: 3,
          fields: [
            { path: 'threshold.count', before: 20, after: 30 },
            { path: 'description', after: 'x' },
          ],
          after: {} as PolicySpec,
        },
        { id: 'old', action: 'delete', version: 2 },
        { id: 'same', action: 'unchanged', version: 1 },
      ],
      false,
    );
    expect(text).toBe(
      [
        '+ api  (new, version 1)',
        '    mode: preview',
        '    key: ["apikey"]',
        '    threshold: {"count":100,"interval":"1m"}',
        '    action: {"type":"throttle"}',
        '~ login  (version 3 → 4)',
        '    threshold.count: 20 → 30',
        '    description: (none) → x',
        '- old  (delete version 2)',
        '= same  (unchanged, version 1)',
        '',
        'Plan: 1 to create, 1 to update, 1 to delete, 1 unchanged. Dry run: nothing was changed.',
      ].join('\n'),
    );
    expect(renderPlan([{ id: 'same', action: 'unchanged', version: 1 }], true)).toContain('Applied: 0 created, 0 updated, 0 deleted, 1 unchanged.');
  });

  it('shows a policy’s costs per route or method, new or changed', () => {
    const costs = [{ methods: ['POST'], paths: ['/login'], cost: 5 }];
    const after = { id: 'login', mode: 'enforce', key: ['ip'], threshold: { count: 100, interval: '1m' }, costs, action: { type: 'throttle' } } as PolicySpec;
    expect(renderPlan([{ id: 'login', action: 'create', after }], false)).toContain('    costs: [{"methods":["POST"],"paths":["/login"],"cost":5}]\n    action:');
    const changed = renderPlan([{ id: 'login', action: 'update', version: 1, fields: [{ path: 'costs', before: costs, after: [{ ...costs[0], cost: 10 }] }], after }], false);
    expect(changed).toContain('    costs: [{"methods":["POST"],"paths":["/login"],"cost":5}] → [{"methods":["POST"],"paths":["/login"],"cost":10}]');
  });
});
