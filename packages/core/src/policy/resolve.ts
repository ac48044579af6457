import type { CompiledPolicy } from './compiled.js';

/**
 * Which policies apply to one request and subject. Policies in the same group
 * compete: only the highest priority among those that match applies, so a
 * per-merchant override (same group, higher priority, `match.subjects`) replaces
 * the default limit for that merchant and for nobody else. Ties go to the id that
 * sorts first, so every instance picks the same one.
 *
 * `atCheck` asks for the enforcer, before the response: policies are matched without
 * their status conditions (matchesAtCheck). A policy with status conditions then
 * applies on its own, outside its group's competition: whether it or another member
 * counted a request was decided by that request's status, which the enforcer does
 * not know, and looking up a ban or count that policy never made finds nothing.
 */
export function applicablePolicies<A>(policies: readonly CompiledPolicy<A>[], request: A, atCheck = false): CompiledPolicy<A>[] {
  const winners = new Map<string, CompiledPolicy<A>>();
  let apart: CompiledPolicy<A>[] | undefined;
  for (const policy of policies) {
    if (!policy.enabled || !(atCheck ? policy.matchesAtCheck(request) : policy.matches(request))) continue;
    if (policy.subjects) {
      const subject = policy.subjectOf(request);
      if (subject === undefined || !policy.subjects.has(subject)) continue;
    }
    if (atCheck && policy.byStatus) {
      (apart ??= []).push(policy);
      continue;
    }
    const current = winners.get(policy.group);
    if (!current || outranks(policy, current)) winners.set(policy.group, policy);
  }
  return apart ? [...winners.values(), ...apart] : [...winners.values()];
}

function outranks(a: CompiledPolicy<unknown>, b: CompiledPolicy<unknown>): boolean {
  return a.priority !== b.priority ? a.priority > b.priority : a.id < b.id;
}
