import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '@banstream/core';
import { edgeTokensFromConfig, parseEdgeTokens } from './edge-auth.js';

describe('edge tokens', () => {
  it('accepts any configured token as a Bearer credential, and nothing else', () => {
    const tokens = parseEdgeTokens('first-token-0123456789, second-token-0123456789')!;
    expect(tokens.allows('Bearer first-token-0123456789')).toBe(true);
    expect(tokens.allows('bearer second-token-0123456789')).toBe(true);
    expect(tokens.allows('Bearer first-token-012345678')).toBe(false);
    expect(tokens.allows('first-token-0123456789')).toBe(false);
    expect(tokens.allows('Basic Zmlyc3Q=')).toBe(false);
    expect(tokens.allows(undefined)).toBe(false);
  });

  it('asks for none when none are configured', () => {
    expect(parseEdgeTokens(undefined)).toBeUndefined();
    expect(parseEdgeTokens(' , ')).toBeUndefined();
  });
});

describe('edgeTokensFromConfig: no anonymous edges unless asked for', () => {
  it('refuses a configuration without tokens, naming both variables', () => {
    let error: unknown;
    try {
      edgeTokensFromConfig({ INGEST_ALLOW_ANONYMOUS_EDGES: false });
    } catch (e) {
      error = e;
    }
    expect(isBanstreamError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toMatch(/^INGEST_EDGE_TOKENS is not set, .* or INGEST_ALLOW_ANONYMOUS_EDGES=true to accept edges without one/);
  });

  it('asks for tokens when they are given, and for none only when anonymous edges are allowed', () => {
    expect(edgeTokensFromConfig({ INGEST_EDGE_TOKENS: 'first-token-0123456789', INGEST_ALLOW_ANONYMOUS_EDGES: false })!.allows('Bearer first-token-0123456789')).toBe(true);
    // Tokens win over the flag: a gateway with tokens never takes anonymous events.
    expect(edgeTokensFromConfig({ INGEST_EDGE_TOKENS: 'first-token-0123456789', INGEST_ALLOW_ANONYMOUS_EDGES: true })!.allows(undefined)).toBe(false);
    expect(edgeTokensFromConfig({ INGEST_ALLOW_ANONYMOUS_EDGES: true })).toBeUndefined();
  });
});
