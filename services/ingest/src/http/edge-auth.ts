import { createHash, timingSafeEqual } from 'node:crypto';
import { BanstreamError } from '@banstream/core';

/**
 * Edge tokens, compared in constant time: each candidate is hashed (so lengths do
 * not leak either) and compared with every configured token, without stopping at a
 * match. Tokens are never logged; only their SHA-256 digests are kept.
 */
export class EdgeTokens {
  private readonly digests: Buffer[];

  constructor(tokens: readonly string[]) {
    if (tokens.length === 0) throw new RangeError('EdgeTokens: at least one token');
    this.digests = tokens.map(digest);
  }

  /** `Authorization: Bearer <token>`; anything else is refused. */
  allows(authorization: string | undefined): boolean {
    if (authorization === undefined || !/^Bearer /i.test(authorization)) return false;
    const candidate = digest(authorization.slice(7).trim());
    let match = false;
    for (const d of this.digests) match = timingSafeEqual(d, candidate) || match;
    return match;
  }
}

/**
 * The edge tokens the gateway asks for, or undefined when it accepts anonymous
 * edges, which must be asked for explicitly: a gateway left without tokens by
 * mistake would take events from anyone who can reach it. CONFIG_INVALID (exit 78)
 * names both variables.
 */
export function edgeTokensFromConfig(config: { INGEST_EDGE_TOKENS?: string | undefined; INGEST_ALLOW_ANONYMOUS_EDGES: boolean }): EdgeTokens | undefined {
  const tokens = parseEdgeTokens(config.INGEST_EDGE_TOKENS);
  if (tokens !== undefined || config.INGEST_ALLOW_ANONYMOUS_EDGES) return tokens;
  throw new BanstreamError(
    'CONFIG_INVALID',
    "INGEST_EDGE_TOKENS is not set, so anyone who can reach the gateway could post events: set INGEST_EDGE_TOKENS to the edges' tokens, " +
      'or INGEST_ALLOW_ANONYMOUS_EDGES=true to accept edges without one (only where nothing untrusted can reach the gateway)',
  );
}

export function parseEdgeTokens(list: string | undefined): EdgeTokens | undefined {
  const tokens = (list ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  return tokens.length === 0 ? undefined : new EdgeTokens(tokens);
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
