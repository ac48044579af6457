import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
 * names the variables.
 */
export function edgeTokensFromConfig(config: { INGEST_EDGE_TOKENS?: string | undefined; INGEST_EDGE_TOKENS_FILE?: string | undefined; INGEST_ALLOW_ANONYMOUS_EDGES: boolean }): EdgeTokens | undefined {
  const fromFile = config.INGEST_EDGE_TOKENS_FILE === undefined ? [] : tokensOfFile(config.INGEST_EDGE_TOKENS_FILE);
  const tokens = [...splitTokens(config.INGEST_EDGE_TOKENS ?? ''), ...fromFile];
  if (tokens.length > 0) return new EdgeTokens(tokens);
  if (config.INGEST_EDGE_TOKENS_FILE !== undefined) throw new BanstreamError('CONFIG_INVALID', `INGEST_EDGE_TOKENS_FILE: ${config.INGEST_EDGE_TOKENS_FILE} holds no token`);
  if (config.INGEST_ALLOW_ANONYMOUS_EDGES) return undefined;
  throw new BanstreamError(
    'CONFIG_INVALID',
    "INGEST_EDGE_TOKENS is not set, so anyone who can reach the gateway could post events: set INGEST_EDGE_TOKENS (or INGEST_EDGE_TOKENS_FILE) to the edges' tokens, " +
      'or INGEST_ALLOW_ANONYMOUS_EDGES=true to accept edges without one (only where nothing untrusted can reach the gateway)',
  );
}

export function parseEdgeTokens(list: string | undefined): EdgeTokens | undefined {
  const tokens = splitTokens(list ?? '');
  return tokens.length === 0 ? undefined : new EdgeTokens(tokens);
}

/** The file's tokens: one a line or comma-separated, `#` to the end of a line is a comment, each as INGEST_EDGE_TOKENS requires. */
function tokensOfFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new BanstreamError('CONFIG_INVALID', `INGEST_EDGE_TOKENS_FILE: cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
  const tokens = splitTokens(text.replace(/#[^\n]*/g, '').replace(/\s*\n\s*/g, ','));
  const bad = tokens.findIndex((t) => t.length < MIN_TOKEN_LENGTH || /\s/.test(t));
  // The position, never the token: a secret must not reach a log.
  if (bad >= 0) throw new BanstreamError('CONFIG_INVALID', `INGEST_EDGE_TOKENS_FILE: token ${bad + 1} of ${path} is shorter than ${MIN_TOKEN_LENGTH} characters or holds a space`);
  return tokens;
}

/** As INGEST_EDGE_TOKENS's pattern asks. */
const MIN_TOKEN_LENGTH = 16;

function splitTokens(list: string): string[] {
  return list
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
