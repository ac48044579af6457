import { loadPolicyFiles } from '@banstream/platform';
import { isBanstreamError, type PolicySpec } from '@banstream/core';
import type { Command } from '../command.js';
import { listCommand, text } from '../command.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderPlan, type PlannedChange } from '../format/plan.js';
import { isoSeconds } from '../format/table.js';

interface PolicyView {
  id: string;
  version: number;
  mode: string;
  enabled: boolean;
  description: string;
  updatedBy: string;
  updatedAt: number;
  spec?: PolicySpec;
  invalid?: string;
}

/** Policies from a file or a folder, validated here with the core's own validator (paths and lines in errors). */
export function readPolicies(path: string, warn?: (line: string) => void): PolicySpec[] {
  try {
    const document = loadPolicyFiles(path);
    const entries = document.allowlist?.length ?? 0;
    if (entries > 0) warn?.(`note: ${path} also lists ${entries} allowlist entr${entries === 1 ? 'y' : 'ies'}; apply does not change the allowlist (banstream allow add)`);
    return document.policies;
  } catch (error) {
    if (isBanstreamError(error, 'POLICY_INVALID')) throw new CliError(error.message, EXIT.invalid);
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, EXIT.usage);
  }
}

export const policyCommands: Command[] = [
  listCommand<PolicyView>({
    name: 'policies list', summary: 'list the policies on the policies topic', path: '/v1/policies', field: 'policies',
    columns: () => [
      { header: 'ID', value: (p) => p.id },
      { header: 'VER', value: (p) => String(p.version), right: true },
      { header: 'MODE', value: (p) => (p.enabled ? p.mode : `${p.mode} (disabled)`) },
      { header: 'ACTION', value: (p) => (p.spec ? p.spec.action.type : 'INVALID') },
      { header: 'KEY', value: (p) => p.spec?.key.join('+') ?? '' },
      { header: 'THRESHOLD', value: (p) => (p.spec ? `${p.spec.threshold.count}/${p.spec.threshold.interval}` : '') },
      { header: 'UPDATED', value: (p) => `${isoSeconds(p.updatedAt)} by ${p.updatedBy}` },
    ],
  }),
  {
    name: 'policies get', usage: 'banstream policies get ID [--json]', summary: 'show one policy', args: 1,
    async run({ api, args, print }) {
      const view = await api().get<PolicyView>(`/v1/policies/${encodeURIComponent(args[0]!)}`);
      print(JSON.stringify(view, null, 2));
    },
  },
  {
    name: 'policies apply', usage: 'banstream policies apply -f FILE|DIR [--dry-run] [--prune] [--json]',
    summary: 'create or update the policies of a file or folder (YAML or JSON), showing what changes',
    options: { file: { type: 'string', short: 'f' }, 'dry-run': { type: 'boolean' }, prune: { type: 'boolean' } },
    async run({ api, values, json, print, io }) {
      const path = text(values, 'file');
      if (!path) throw new CliError('policies apply needs -f FILE|DIR', EXIT.usage);
      const policies = readPolicies(path, (line) => io.stderr.write(`${line}\n`));
      const dryRun = values['dry-run'] === true;
      const result = await api().post<{ applied: boolean; changes: PlannedChange[] }>(dryRun ? '/v1/policies/plan' : '/v1/policies/apply', { policies, prune: values.prune === true });
      print(json ? JSON.stringify(result, null, 2) : renderPlan(result.changes, result.applied));
    },
  },
  {
    name: 'policies delete', usage: 'banstream policies delete ID', summary: 'delete a policy (a tombstone)', args: 1,
    async run({ api, args, json, print }) {
      const result = await api().delete<{ deleted: string; version: number }>(`/v1/policies/${encodeURIComponent(args[0]!)}`);
      print(json ? JSON.stringify(result) : `deleted ${result.deleted} (was version ${result.version})`);
    },
  },
];
