import { parseSubject, type Allowlist, type RequestAttributes } from '@banstream/core';

/**
 * Is a subject covered by the allowlist? Judged on the subject's own parts (its ip,
 * the network address of its prefix, its user, its API key), so a subject is never
 * banned because of who else shared a request with it.
 */
export function subjectAllowlisted(allowlist: Allowlist, subject: string, nowMs: number): boolean {
  if (allowlist.size === 0) return false;
  let ip = '';
  let userId: string | undefined;
  let apiKeyHash: string | undefined;
  for (const part of parseSubject(subject)) {
    if (part.scope === 'ip') ip = part.value;
    else if (part.scope === 'cidr') ip = part.value.slice(0, part.value.indexOf('/'));
    else if (part.scope === 'user') userId = part.value;
    else if (part.scope === 'apikey') apiKeyHash = part.value;
  }
  const attrs: RequestAttributes = { ip, userId, apiKeyHash, method: '', host: '', path: '', headers: {}, timestamp: nowMs };
  return allowlist.find(attrs, nowMs) !== undefined;
}
