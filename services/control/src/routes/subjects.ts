import { canonicalAllowEntry, normaliseSubject, tryParseCidr, tryParseIp } from '@banstream/core';

/**
 * A subject as an operator types it → its canonical text: a bare address is
 * `ip:…`, a bare network `cidr:…` (a /32 or /128 is the address), anything else is
 * read as `scope:value` (`user:42`, `apikey:<hash>`, composites).
 */
export function canonicalSubject(text: string): string {
  const bare = text.trim();
  if (tryParseIp(bare) || tryParseCidr(bare) || /^(ip|cidr):/.test(bare)) return canonicalAllowEntry(bare);
  return normaliseSubject(bare);
}
