import { describe, expect, it } from 'vitest';
import { decisionHeaders, problemBody } from './rate-limit-headers.js';

describe('decisionHeaders', () => {
  const quota = { policyId: 'api', limit: 100, remaining: 40, windowSeconds: 60 };

  it('announces the quota of an allowed request', () => {
    expect(decisionHeaders({ allowed: true, status: 200, source: 'none', reason: '', previewDenies: [], quota })).toEqual({
      'ratelimit-policy': '"api";q=100;w=60',
      ratelimit: '"api";r=40;t=60',
    });
  });

  it('adds Retry-After with at most 10% jitter on a denial', () => {
    const denied = { allowed: false, status: 429 as const, source: 'throttle' as const, reason: 'x', retryAfterSeconds: 30, policyId: 'api', previewDenies: [], quota };
    expect(decisionHeaders(denied, () => 0)['retry-after']).toBe('30');
    expect(decisionHeaders(denied, () => 0.999)['retry-after']).toBe('33');
    expect(decisionHeaders(denied, () => 0)['ratelimit']).toBe('"api";r=0;t=30');
    expect(problemBody(denied)).toMatchObject({ status: 429, title: 'Too many requests', policy: 'api', retryAfter: 30 });
  });
});
