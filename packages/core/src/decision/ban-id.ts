import { createHash } from 'node:crypto';

/**
 * A ban's id is a function of what caused it, never of when or where it was
 * computed: replaying the same events after a crash or rebalance yields the same
 * id, so a consumer that already holds the ban sees a duplicate, not a second ban.
 */
export function banId(policyId: string, subject: string, startedAtMs: number): string {
  return createHash('sha256').update(`${policyId}\u0000${subject}\u0000${startedAtMs}`).digest('base64url').slice(0, 22);
}
