import type { CompiledPolicy } from './compiled.js';

/**
 * Which policies apply to one request and subject. Policies in the same group
 * compete: only the highest priority among those that match applies, so a
 * per-merchant override (same group, higher priority, `match.subjects`) replaces
 * the default limit for that merchant and for nobody else. Ties go to the id that
 * sorts first, so every instance picks the same one.
 */
export function applicablePolicies<A>(policies: readonly CompiledPolicy<A>[], request: A): CompiledPolicy<A>[] {
  const winners = new Map<string, CompiledPolicy<A>>();
  for (const policy of policies) {
    if (!policy.enabled || !policy.matches(request)) continue;
    if (policy.subjects) {
      const subject = policy.subjectOf(request);
      if (subject === undefined || !policy.subjects.has(subject)) continue;
    }
    const current = winners.get(policy.group);
    if (!current || outranks(policy, current)) winners.set(policy.group, policy);
  }
  return [...winners.values()];
}

function outranks(a: CompiledPolicy<unknown>, b: CompiledPolicy<unknown>): boolean {
  return a.priority !== b.priority ? a.priority > b.priority : a.id < b.id;
}
