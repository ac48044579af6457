import { describe, expect, it } from 'vitest';
import type { GeoAlert, PolicyRecord } from '@banstream/schemas';
import { ControlState } from './control-state.js';

const policy = (version: number, at = version): PolicyRecord => ({
  id: 'p',
  version,
  description: '',
  owner: '',
  mode: 'preview',
  enabled: true,
  definition: '{}',
  updatedBy: 'a',
  updatedAt: at,
});
const alert = (code: string, at: number, state: 'fired' | 'resolved' = 'fired'): GeoAlert => ({
  alertId: code,
  scope: 'country',
  code,
  state,
  currentRate: 1,
  baselineRate: 1,
  zScore: 0,
  ratio: 1,
  hourOfWeek: 0,
  timeZone: 'UTC',
  localHourOfWeek: 0,
  at,
});

describe('ControlState', () => {
  it('keeps the newest version of a policy and every version seen, once each', () => {
    const state = new ControlState(10);
    for (const v of [1, 2, 2, 1]) state.applyPolicy('p', policy(v));
    expect(state.policies.get('p')?.version).toBe(2);
    expect(state.policyVersions('p').map((r) => r.version)).toEqual([1, 2]);
    state.applyPolicy('p', null);
    expect(state.policies.has('p')).toBe(false);
    expect(state.policyVersions('p')).toHaveLength(2);
  });

  it('keeps the most recent alerts, newest first, filtered by time and state', () => {
    const state = new ControlState(3);
    for (let i = 1; i <= 10; i++) state.applyAlert(alert(`C${i}`, i, i % 2 === 0 ? 'resolved' : 'fired'));
    expect(state.alerts({ limit: 10 }).map((a) => a.at)).toEqual([10, 9, 8]);
    expect(state.alerts({ limit: 10, state: 'fired' }).map((a) => a.at)).toEqual([9]);
    expect(state.alerts({ limit: 10, since: 8 }).map((a) => a.at)).toEqual([10, 9]);
  });
});
