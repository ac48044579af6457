import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPolicyFiles } from './policy-files.js';

const policy = (id: string) => `policies:\n  - id: ${id}\n    key: [ip]\n    threshold: { count: 10, interval: 1m }\n    action: { type: throttle }\n`;

describe('loadPolicyFiles', () => {
  it('merges every policy file of a folder in name order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'policies-'));
    writeFileSync(join(dir, 'b.yaml'), policy('second'));
    writeFileSync(join(dir, 'a.yml'), policy('first'));
    writeFileSync(join(dir, 'c.json'), JSON.stringify({ policies: [], allowlist: [{ entry: '10.0.0.0/8', reason: 'office' }] }));
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    const doc = loadPolicyFiles(dir);
    expect(doc.policies.map((p) => p.id)).toEqual(['first', 'second']);
    expect(doc.allowlist).toEqual([{ entry: '10.0.0.0/8', reason: 'office' }]);
  });

  it('names the file and the field of an invalid policy', () => {
    const dir = mkdtempSync(join(tmpdir(), 'policies-'));
    writeFileSync(join(dir, 'bad.yaml'), policy('x').replace('count: 10', 'count: 0'));
    expect(() => loadPolicyFiles(join(dir, 'bad.yaml'))).toThrow(/bad\.yaml: .*policies\[0\]\.threshold\.count: must be > 0/s);
  });

  it('refuses the same policy id in two files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'policies-'));
    writeFileSync(join(dir, 'a.yaml'), policy('dup'));
    writeFileSync(join(dir, 'b.yaml'), policy('dup'));
    expect(() => loadPolicyFiles(dir)).toThrow(/b\.yaml: policy id "dup" is already defined in .*a\.yaml/);
  });
});
