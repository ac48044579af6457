import type { Logger, Registry } from '@banstream/platform';
import { CONTEXT_SCOPES, scopesIn, type ContextNeeds, type ContextScope } from '../context-scopes.js';
import type { ContextNeed } from '../enforcer.js';
import { enforcerMetrics } from '../metrics.js';

/** The variable that gives GET /v1/auth each context scope. */
export const CONTEXT_HEADER_VARIABLES: Readonly<Record<ContextScope, string>> = {
  country: 'ENFORCER_COUNTRY_HEADER',
  region: 'ENFORCER_REGION_HEADER',
  asn: 'ENFORCER_ASN_HEADER',
  route: 'ENFORCER_ROUTE_HEADER',
};

/**
 * What GET /v1/auth cannot enforce, made visible. It knows a request's country,
 * region, ASN and route only from the headers configured for them; a ban or policy
 * naming one it is not given never applies there (POST /v1/check and the library get
 * them from the edge). The first ban and the first policy naming each missing scope
 * are logged (at start, as the caches load, and later), and
 * banstream_enforcer_auth_unenforceable counts them by scope and kind, never by value.
 */
export class AuthGaps {
  private readonly logged = new Set<string>();
  private readonly unenforceable;

  constructor(
    private readonly sources: ReadonlySet<ContextScope>,
    private readonly logger: Logger,
    registry: Registry,
  ) {
    this.unenforceable = enforcerMetrics(registry).authUnenforceable;
  }

  /** A ban or policy naming context scopes came (EnforcerOptions.onContextNeed). */
  need(need: ContextNeed): void {
    for (const scope of scopesIn(need.scopes)) {
      if (this.sources.has(scope) || this.logged.has(`${need.kind}:${scope}`)) continue;
      this.logged.add(`${need.kind}:${scope}`);
      this.logger.warn(
        { scope, kind: need.kind, policy: need.policyId },
        `GET /v1/auth cannot apply ${need.kind === 'ban' ? 'bans' : 'policies'} on ${scope}: it is given no ${scope} (${CONTEXT_HEADER_VARIABLES[scope]} is none); POST /v1/check and the library apply them`,
      );
    }
  }

  /** Sets the gauge from what the caches hold (Enforcer.contextNeeds): at start and after each purge. */
  refresh(needs: ContextNeeds): void {
    for (const scope of CONTEXT_SCOPES) {
      const missing = !this.sources.has(scope);
      this.unenforceable.set({ scope, kind: 'ban' }, missing ? needs[scope].bans : 0);
      this.unenforceable.set({ scope, kind: 'policy' }, missing ? needs[scope].policies : 0);
    }
  }
}
