import { SUBJECT_SEPARATOR, type CompiledPolicy } from '@banstream/core';

/**
 * Attributes of a request that only its caller can tell: the library and POST
 * /v1/check get them from the edge, GET /v1/auth from a trusted proxy's headers, and
 * only those configured (ENFORCER_COUNTRY_HEADER…). A ban or policy that names one
 * never applies to a check without it, so what names them is tracked (auth-gaps.ts).
 */
export const CONTEXT_SCOPES = ['country', 'region', 'asn', 'route'] as const;
export type ContextScope = (typeof CONTEXT_SCOPES)[number];

/** A set of context scopes: bit i stands for CONTEXT_SCOPES[i]. */
export type ScopeSet = number;

/** Per context scope, the live bans and the enabled policies that name it. */
export type ContextNeeds = Record<ContextScope, { bans: number; policies: number }>;

const PREFIXES = CONTEXT_SCOPES.map((s) => `${s}:`);

export function scopeBit(scope: ContextScope): ScopeSet {
  return 1 << CONTEXT_SCOPES.indexOf(scope);
}

/**
 * The context scopes a subject names (`country:AU`, `ip:192.0.2.1|route:/login`): one
 * pass over its parts, no allocation (values escape the separator, so a part's scope
 * is the text from its start to its first colon).
 */
export function scopesOfSubject(subject: string): ScopeSet {
  let set = 0;
  for (let start = 0; start < subject.length; ) {
    let end = subject.indexOf(SUBJECT_SEPARATOR, start);
    if (end < 0) end = subject.length;
    for (let i = 0; i < PREFIXES.length; i++) if (end - start > PREFIXES[i]!.length && subject.startsWith(PREFIXES[i]!, start)) set |= 1 << i;
    start = end + 1;
  }
  return set;
}

/** The context scopes a policy needs to apply: its key's dimensions, and match.countries or regions. */
export function scopesOfPolicy(policy: CompiledPolicy): ScopeSet {
  let set = 0;
  for (const dimension of policy.spec.key) {
    const i = (CONTEXT_SCOPES as readonly string[]).indexOf(dimension);
    if (i >= 0) set |= 1 << i;
  }
  if (policy.spec.match?.countries) set |= scopeBit('country');
  if (policy.spec.match?.regions) set |= scopeBit('region');
  return set;
}

export function scopesIn(set: ScopeSet): ContextScope[] {
  return CONTEXT_SCOPES.filter((_, i) => (set & (1 << i)) !== 0);
}
