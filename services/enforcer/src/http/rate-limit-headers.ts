import type { Decision } from '../enforcer.js';

/**
 * Response headers for a decision: the IETF RateLimit-Policy and RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-11: `"name";q=quota;w=window` and
 * `"name";r=remaining;t=reset`), and Retry-After on a denial, stretched by up to
 * 10% (at least a second) of random jitter so the clients denied together do not
 * all come back in the same second.
 */
export function decisionHeaders(decision: Decision, uniform: () => number = Math.random): Record<string, string> {
  const headers: Record<string, string> = {};
  const quota = decision.quota;
  if (quota) {
    const name = JSON.stringify(quota.policyId);
    headers['ratelimit-policy'] = `${name};q=${quota.limit};w=${quota.windowSeconds}`;
    const reset = decision.allowed ? quota.windowSeconds : (decision.retryAfterSeconds ?? quota.windowSeconds);
    headers['ratelimit'] = `${name};r=${decision.allowed ? quota.remaining : 0};t=${reset}`;
  }
  if (!decision.allowed && decision.retryAfterSeconds !== undefined) {
    const jitter = Math.floor(uniform() * Math.max(1, Math.ceil(decision.retryAfterSeconds * 0.1)) + 0.5);
    headers['retry-after'] = String(decision.retryAfterSeconds + jitter);
  }
  return headers;
}

/** RFC 9457 problem details for a denied request. */
export function problemBody(decision: Decision): Record<string, unknown> {
  const banned = decision.source === 'ban';
  const warming = decision.source === 'warming';
  return {
    type: banned ? 'https://banstream.dev/problems/banned' : warming ? 'https://banstream.dev/problems/warming-up' : 'https://banstream.dev/problems/rate-limited',
    title: banned ? 'Request blocked' : warming ? 'Not ready: try again shortly' : 'Too many requests',
    status: decision.status,
    detail: decision.reason,
    ...(decision.policyId ? { policy: decision.policyId } : {}),
    ...(decision.retryAfterSeconds !== undefined ? { retryAfter: decision.retryAfterSeconds } : {}),
  };
}
