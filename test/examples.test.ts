import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { compilePolicy } from '@banstream/core';
import { loadPolicyFiles } from '@banstream/cli';

// The README points newcomers at these files: they must stay valid.
describe('example policies', () => {
  it('load, validate and compile', () => {
    const doc = loadPolicyFiles(fileURLToPath(new URL('../examples/policies', import.meta.url)));
    const compiled = doc.policies.map(compilePolicy);
    expect(compiled.map((p) => p.id)).toEqual(['login-bruteforce', 'api-default', 'api-merchant-acme', 'signup-per-ip', 'night-traffic-fr']);
    expect(doc.allowlist).toHaveLength(1);
  });
});
