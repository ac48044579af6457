import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe('INGEST_EDGE_TOKENS_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'edge-tokens-'));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const refusal = (config: Parameters<typeof edgeTokensFromConfig>[0]) => {
    try {
      edgeTokensFromConfig(config);
    } catch (error) {
      expect(isBanstreamError(error, 'CONFIG_INVALID')).toBe(true);
      return (error as Error).message;
    }
    throw new Error('expected CONFIG_INVALID');
  };

  it('reads one token a line or comma-separated, with comments, beside INGEST_EDGE_TOKENS', () => {
    const path = file('tokens', '# edges of region A\nfirst-token-0123456789\n  second-token-0123456789 , third-token-0123456789 # the canary\n\n');
    const tokens = edgeTokensFromConfig({ INGEST_EDGE_TOKENS_FILE: path, INGEST_EDGE_TOKENS: 'inline-token-0123456789', INGEST_ALLOW_ANONYMOUS_EDGES: false })!;
    for (const t of ['first', 'second', 'third', 'inline']) expect(tokens.allows(`Bearer ${t}-token-0123456789`)).toBe(true);
    expect(tokens.allows('Bearer # the canary')).toBe(false);
  });

  it('refuses an unreadable file, an empty one (even with anonymous edges allowed) and a short token, never printing the token', () => {
    expect(refusal({ INGEST_EDGE_TOKENS_FILE: join(dir, 'missing'), INGEST_ALLOW_ANONYMOUS_EDGES: false })).toMatch(/^INGEST_EDGE_TOKENS_FILE: cannot read .*missing/);
    expect(refusal({ INGEST_EDGE_TOKENS_FILE: file('empty', '# nothing yet\n'), INGEST_ALLOW_ANONYMOUS_EDGES: true })).toMatch(/holds no token/);
    const message = refusal({ INGEST_EDGE_TOKENS_FILE: file('short', 'first-token-0123456789\nshort-secret\n'), INGEST_ALLOW_ANONYMOUS_EDGES: false });
    expect(message).toMatch(/token 2 of .* is shorter than 16 characters/);
    expect(message).not.toContain('short-secret');
  });
});
