import type { RequestAttributes } from '../subjects/index.js';
import { compilePolicy } from './compile.js';
import type { CompiledPolicy } from './compiled.js';
import type { PolicyRecord } from './record.js';
import { applicablePolicies } from './resolve.js';
import { formatPolicyError, validatePolicyDocument } from './validate.js';

/**
 * What applicable returns when no policy applies: shared, so read-only by its type. Not
 * frozen, nor are the lists of one policy: V8 iterates a frozen array with for-of
 * through an iterator object and a result object per element (88 bytes for an empty one).
 */
const NONE: readonly CompiledPolicy[] = [];

export type PolicyChange =
  | { kind: 'applied'; id: string; version: number }
  | { kind: 'removed'; id: string }
  | { kind: 'rejected'; id: string; reason: string }
  | { kind: 'stale'; id: string; version: number; held: number };

/**
 * The policies a service applies, as read from the compacted policies topic. A
 * record that fails validation is rejected with its reason and never applied; the
 * version it would have replaced stays in force. `wanted` picks the enabled
 * policies the service uses (the aggregator counts `async` ones only).
 */
export class PolicyBook {
  private readonly held = new Map<string, { version: number; policy: CompiledPolicy }>();
  private counted: CompiledPolicy[] = [];
  /** Each counted policy in a list of its own, for applicable (shared, like NONE). */
  private alone: (readonly CompiledPolicy[])[] = [];
  /** No two counted policies compete (same group) and none is an override: no ranking needed. */
  private uncontested = true;

  constructor(private readonly wanted: (policy: CompiledPolicy) => boolean = () => true) {}

  /** Enabled wanted policies, in id order so every instance iterates them alike. */
  get policies(): readonly CompiledPolicy[] {
    return this.counted;
  }

  /**
   * The counted policies a request counts towards (applicablePolicies: match,
   * schedule, overrides, priority within a group), without its per-request
   * allocations when no two policies compete. The aggregator's question.
   */
  applicable(attrs: RequestAttributes): readonly CompiledPolicy[] {
    return this.select(attrs, false);
  }

  /**
   * The counted policies that apply to a request being checked, before its response:
   * matched without their status conditions (matchesAtCheck), so a ban earned by
   * failed logins denies the subject's next request whatever its status. The enforcer's question.
   */
  applicableAtCheck(attrs: RequestAttributes): readonly CompiledPolicy[] {
    return this.select(attrs, true);
  }

  private select(attrs: RequestAttributes, atCheck: boolean): readonly CompiledPolicy[] {
    if (!this.uncontested) return applicablePolicies(this.counted, attrs, atCheck);
    const all = this.counted;
    let i = 0;
    while (i < all.length && (atCheck ? all[i]!.matchesAtCheck(attrs) : all[i]!.matches(attrs))) i++;
    if (i === all.length) return all;
    // No array is made while at most one policy applies (the common case): a shared one-policy list.
    let some = i > 1 ? all.slice(0, i) : undefined;
    let only = i === 1 ? 0 : -1;
    for (i++; i < all.length; i++) {
      if (!(atCheck ? all[i]!.matchesAtCheck(attrs) : all[i]!.matches(attrs))) continue;
      if (some) some.push(all[i]!);
      else if (only < 0) only = i;
      else some = [all[only]!, all[i]!];
    }
    return some ?? (only < 0 ? NONE : this.alone[only]!);
  }

  get(id: string): CompiledPolicy | undefined {
    return this.held.get(id)?.policy;
  }

  /** Longest interval any of them uses (threshold or ban threshold). */
  get longestWindowMs(): number {
    let longest = 0;
    for (const p of this.counted) longest = Math.max(longest, ...policyIntervals(p));
    return longest;
  }

  /** Applies one record of the policies topic; `record` null is a tombstone. */
  apply(key: string, record: PolicyRecord | null): PolicyChange {
    if (record === null) {
      this.held.delete(key);
      this.rebuild();
      return { kind: 'removed', id: key };
    }
    const current = this.held.get(key);
    if (current && record.version < current.version) return { kind: 'stale', id: key, version: record.version, held: current.version };
    const compiled = compileRecord(key, record);
    if (typeof compiled === 'string') return { kind: 'rejected', id: key, reason: compiled };
    this.held.set(key, { version: record.version, policy: compiled });
    this.rebuild();
    return { kind: 'applied', id: key, version: record.version };
  }

  private rebuild(): void {
    this.counted = [...this.held.values()]
      .map((h) => h.policy)
      .filter((p) => p.enabled && this.wanted(p))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.alone = this.counted.map((p) => [p]);
    const groups = new Set(this.counted.map((p) => p.group));
    this.uncontested = groups.size === this.counted.length && this.counted.every((p) => !p.subjects);
  }
}

/** The intervals a policy's windows are counted over, without duplicates. */
export function policyIntervals(policy: CompiledPolicy): number[] {
  const intervals = [policy.threshold.intervalMs];
  if (policy.action.type === 'ban' && policy.action.banThreshold.intervalMs !== policy.threshold.intervalMs) {
    intervals.push(policy.action.banThreshold.intervalMs);
  }
  return intervals;
}

/**
 * The record's envelope (id, mode, enabled, description, owner) wins over the same
 * fields in `definition`, except that a definition naming another id is an error.
 */
function compileRecord(key: string, record: PolicyRecord): CompiledPolicy | string {
  if (record.id !== key) return `record id ${JSON.stringify(record.id)} differs from its key ${JSON.stringify(key)}`;
  let definition: unknown;
  try {
    definition = JSON.parse(record.definition);
  } catch (error) {
    return `definition is not JSON: ${(error as Error).message}`;
  }
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) return 'definition must be a JSON object';
  const spec = definition as Record<string, unknown>;
  if (spec.id !== undefined && spec.id !== key) return `definition.id ${JSON.stringify(spec.id)} differs from the policy id ${JSON.stringify(key)}`;
  const merged = { ...spec, id: key, mode: record.mode, enabled: record.enabled, description: record.description, owner: record.owner };
  const validation = validatePolicyDocument({ policies: [merged] });
  // Paths read as in the definition (`threshold.count: …`), not as in a policy file.
  if (!validation.ok) return validation.errors.map((e) => formatPolicyError(e).replace(/^policies\[0\]\.?/, '')).join('; ');
  return compilePolicy(validation.document.policies![0]!);
}
