import { createHash, timingSafeEqual } from 'node:crypto';

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

export function parseEdgeTokens(list: string | undefined): EdgeTokens | undefined {
  const tokens = (list ?? '').split(',').map((t) => t.trim()).filter((t) => t.length > 0);
  return tokens.length === 0 ? undefined : new EdgeTokens(tokens);
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
