import { BanstreamError } from '@banstream/core';
import type { ContextScope } from '../context-scopes.js';

/** Longest route template a proxy may send (as POST /v1/check accepts). */
export const MAX_ROUTE_LENGTH = 512;

/**
 * Each context scope's value as a trusted proxy sends it: ISO 3166-1 alpha-2
 * (`AU`), ISO 3166-2 (`FR-IDF`), an unsigned 32-bit ASN in decimal (`13335`), a route
 * template (`/users/:id`). Anything else is refused, not dropped: the proxy is
 * misconfigured, and a value guessed at would decide the request.
 */
const CHECKS: Readonly<Record<ContextScope, { valid: (value: string) => boolean; expected: string }>> = {
  country: { valid: (v) => /^[A-Za-z]{2}$/.test(v), expected: 'an ISO 3166-1 alpha-2 code such as AU' },
  region: { valid: (v) => /^[A-Za-z]{2}-[A-Za-z0-9]{1,3}$/.test(v), expected: 'an ISO 3166-2 code such as FR-IDF' },
  asn: { valid: (v) => /^(0|[1-9][0-9]{0,9})$/.test(v) && Number(v) <= 0xffffffff, expected: 'an AS number from 0 to 4294967295, digits only' },
  route: { valid: (v) => v.length <= MAX_ROUTE_LENGTH, expected: `a route template of at most ${MAX_ROUTE_LENGTH} characters` },
};

/** A context value from header `header`, checked; SUBJECT_INVALID_ATTRIBUTE (a 400 naming both) when it is not one. */
export function contextValue(scope: ContextScope, header: string, value: string): string {
  if (CHECKS[scope].valid(value)) return value;
  const shown = value.length > 64 ? `${JSON.stringify(value.slice(0, 64))}… (${value.length} characters)` : JSON.stringify(value);
  const reason = `header ${header} ${shown} is not ${CHECKS[scope].expected}`;
  throw new BanstreamError('SUBJECT_INVALID_ATTRIBUTE', `invalid request attribute ${scope}: ${reason}`, { details: { field: scope, header, reason } });
}
