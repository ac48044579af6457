import { readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { BanstreamError, parsePolicyText, type AllowEntrySpec, type PolicyDocumentSpec, type PolicySpec } from '@banstream/core';

const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/**
 * Reads policies from a file or from every .yaml/.yml/.json file of a folder
 * (sorted, not recursive) into one document. Every file is validated; errors name
 * the file, and a policy id defined in two files is an error, not a silent override.
 */
export function loadPolicyFiles(path: string): PolicyDocumentSpec {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((f) => EXTENSIONS.has(extname(f).toLowerCase()))
        .sort()
        .map((f) => join(path, f))
    : [path];
  const policies: PolicySpec[] = [];
  const allowlist: AllowEntrySpec[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const format = extname(file).toLowerCase() === '.json' ? 'json' : 'yaml';
    let document: PolicyDocumentSpec;
    try {
      document = parsePolicyText(readFileSync(file, 'utf8'), format);
    } catch (cause) {
      throw new BanstreamError('POLICY_INVALID', `${file}: ${(cause as Error).message}`, { cause });
    }
    for (const policy of document.policies) {
      const other = seen.get(policy.id);
      if (other) throw new BanstreamError('POLICY_INVALID', `${file}: policy id "${policy.id}" is already defined in ${other}`);
      seen.set(policy.id, file);
      policies.push(policy);
    }
    allowlist.push(...(document.allowlist ?? []));
  }
  return allowlist.length > 0 ? { policies, allowlist } : { policies };
}
