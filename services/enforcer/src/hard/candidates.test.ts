import { describe, expect, it } from 'vitest';
import { failureModeCandidate, limitCandidate } from './candidates.js';
import { limitSpecOf } from './limit-spec.js';
import type { HardLimitPolicy } from './types.js';

const policy = (over: Partial<HardLimitPolicy> = {}): HardLimitPolicy => ({
  id: 'signup-per-ip',
  mode: 'enforce',
  threshold: { count: 5, intervalMs: 86_400_000 },
  action: { type: 'throttle', status: 429 },
  enforcement: { type: 'hard', failureMode: 'closed', algorithm: 'sliding-window' },
  ...over,
});

describe('limitSpecOf', () => {
  it('takes count and interval for windows and logs, size and emission interval for token buckets', () => {
    expect(limitSpecOf(policy())).toMatchObject({ algorithm: 'sliding-window', limit: 5, args: [5, 86_400_000], description: '5 per 1d', failureMode: 'closed' });
    const bucket = policy({
      threshold: { count: 100, intervalMs: 60_000, burst: { size: 20, refillPerSecond: 4 } },
      enforcement: { type: 'hard', failureMode: 'local', algorithm: 'token-bucket' },
    });
    expect(limitSpecOf(bucket)).toMatchObject({ limit: 20, args: [20, 250], description: 'a burst of 20 refilled at 4/s' });
    // The local fallback is a sliding window of the threshold itself.
    expect(limitSpecOf(bucket).local).toEqual({ limit: 100, intervalMs: 60_000, description: '100 per 1m' });
  });

  it('refuses a policy that is not hard', () => {
    expect(() => limitSpecOf(policy({ enforcement: { type: 'async', failureMode: 'closed' } }))).toThrow(/not a hard policy/);
  });
});

describe('limitCandidate', () => {
  it('allows with the limit and what remains', () => {
    const p = policy();
    expect(limitCandidate(p, limitSpecOf(p), { allowed: true, remaining: 3, retryAfterMs: 0 }, 'hard-limit')).toEqual({
      source: 'hard-limit',
      policyId: 'signup-per-ip',
      deny: false,
      status: 429,
      preview: false,
      reason: 'within the hard limit of 5 per 1d',
      limit: 5,
      remaining: 3,
    });
  });

  it('denies with the policy status and a Retry-After rounded up to whole seconds', () => {
    const p = policy({ action: { type: 'throttle', status: 403 } });
    const c = limitCandidate(p, limitSpecOf(p), { allowed: false, remaining: 0, retryAfterMs: 1_001 }, 'hard-limit');
    expect(c).toMatchObject({ deny: true, status: 403, retryAfterSeconds: 2, remaining: 0, reason: 'hard limit of 5 per 1d reached (policy signup-per-ip)' });
    expect(limitCandidate(p, limitSpecOf(p), { allowed: false, remaining: 0, retryAfterMs: 1 }, 'hard-limit').retryAfterSeconds).toBe(1);
  });

  it('reports preview denials as preview, and alert policies never deny', () => {
    const preview = policy({ mode: 'preview' });
    expect(limitCandidate(preview, limitSpecOf(preview), { allowed: false, remaining: 0, retryAfterMs: 5 }, 'hard-limit')).toMatchObject({ deny: true, preview: true });
    const alert = policy({ action: { type: 'alert' } });
    expect(limitCandidate(alert, limitSpecOf(alert), { allowed: false, remaining: 0, retryAfterMs: 5 }, 'hard-limit')).toMatchObject({ deny: false, status: 429 });
  });

  it('names the local failure mode when it decided', () => {
    const p = policy({ enforcement: { type: 'hard', failureMode: 'local', algorithm: 'sliding-window' } });
    const c = limitCandidate(p, limitSpecOf(p).local, { allowed: false, remaining: 0, retryAfterMs: 60_000 }, 'fail-mode');
    expect(c).toMatchObject({ source: 'fail-mode', deny: true, retryAfterSeconds: 60, reason: 'limit store unavailable; local limit of 5 per 1d reached (policy signup-per-ip)' });
  });
});

describe('failureModeCandidate', () => {
  it('open allows, closed denies with the policy status', () => {
    const p = policy();
    expect(failureModeCandidate(p, limitSpecOf(p), 'open', 1)).toEqual({
      source: 'fail-mode',
      policyId: 'signup-per-ip',
      deny: false,
      status: 429,
      preview: false,
      limit: 5,
      reason: 'limit store unavailable; allowed by failure mode open (policy signup-per-ip)',
    });
    expect(failureModeCandidate(p, limitSpecOf(p), 'closed', 2)).toMatchObject({
      deny: true,
      status: 429,
      retryAfterSeconds: 2,
      reason: 'limit store unavailable; denied by failure mode closed (policy signup-per-ip)',
    });
  });
});
