import { parseSubject } from '@banstream/core';

/**
 * Scopes that name a client: a ban on a subject with one of these parts refuses that
 * client's requests. A subject made only of other parts (`method:GET`, `host:…`,
 * `country:FR`, `asn:…`, `path:/`, `route:…`) refuses every client whose requests
 * carry it: one typo takes a whole site, country or network operator offline.
 */
const CLIENT_SCOPES = new Set(['ip', 'cidr', 'user', 'apikey']);
const isClientScope = (scope: string) => CLIENT_SCOPES.has(scope) || scope.startsWith('header.') || scope.startsWith('cookie.');

/** Why a manual ban on this canonical subject refuses whole populations, or undefined when it names a client. */
export function broadSubjectReason(subject: string): string | undefined {
  const scopes = parseSubject(subject).map((part) => part.scope);
  if (scopes.some(isClientScope)) return undefined;
  return `${subject} names no client (no ip, cidr, user, apikey, header or cookie part): it refuses every request that carries it, from everyone`;
}
