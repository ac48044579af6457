import { describe, expect, it } from 'vitest';
import { parseEdgeTokens } from './edge-auth.js';

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
