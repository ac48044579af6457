import { DEFAULT_MIN_PREFIX, describeWide, wideNetwork } from '@banstream/api';
import { canonicalAllowEntry, isBanstreamError, type PolicySpec } from '@banstream/core';
import type { Command } from '../command.js';
import { listCommand, text } from '../command.js';
import { CliError, EXIT } from '../exit-codes.js';
import { renderPlan, type PlannedChange } from '../format/plan.js';
import { isoSeconds } from '../format/table.js';
import { loadPolicyFiles } from '../policy-files.js';

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

/**
 * Policies from a file or a folder, validated here with the core's own validator
 * (paths and lines in errors). Allowlist entries in them are not applied, but are
 * held to the control API's default network limits all the same: a file that
 * allows 0.0.0.0/0 is wrong, whatever reads it.
 */
export function readPolicies(path: string, warn?: (line: string) => void): PolicySpec[] {
  let document;
  try {
    document = loadPolicyFiles(path);
  } catch (error) {
    if (isBanstreamError(error, 'POLICY_INVALID')) throw new CliError(error.message, EXIT.invalid);
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, EXIT.usage);
  }
  const allowlist = document.allowlist ?? [];
  const wide = allowlist.flatMap((item, i) => wideEntry(item.entry, i));
  if (wide.length > 0) throw new CliError(`${path}: allowlist entries wider than the control API allows without force`, EXIT.invalid, wide);
  if (allowlist.length > 0) warn?.(`note: ${path} also lists ${allowlist.length} allowlist entr${allowlist.length === 1 ? 'y' : 'ies'}; apply does not change the allowlist (banstream allow add)`);
  return document.policies;
}

/** `allowlist[0].entry: 0.0.0.0/0 is wider than …`, or nothing. The validator has checked the entry's form. */
function wideEntry(entry: string, index: number): string[] {
  const network = wideNetwork(canonicalAllowEntry(entry), DEFAULT_MIN_PREFIX);
  if (network === undefined) return [];
  return [`allowlist[${index}].entry: ${describeWide(network, 'allowlist entry')}; if you mean it, add it with banstream allow add ${entry} --force`];
}

export const policyCommands: Command[] = [
  listCommand<PolicyView>({
    name: 'policies list',
    summary: 'list the policies on the policies topic',
    path: '/v1/policies',
    field: 'policies',
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
    name: 'policies get',
    usage: 'banstream policies get ID [--json]',
    summary: 'show one policy',
    args: 1,
    async run({ api, args, print }) {
      const view = await api().get<PolicyView>(`/v1/policies/${encodeURIComponent(args[0]!)}`);
      print(JSON.stringify(view, null, 2));
    },
  },
  {
    name: 'policies apply',
    usage: 'banstream policies apply -f FILE|DIR [--dry-run] [--prune] [--json]',
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
    name: 'policies delete',
    usage: 'banstream policies delete ID',
    summary: 'delete a policy (a tombstone)',
    args: 1,
    async run({ api, args, json, print }) {
      const result = await api().delete<{ deleted: string; version: number }>(`/v1/policies/${encodeURIComponent(args[0]!)}`);
      print(json ? JSON.stringify(result) : `deleted ${result.deleted} (was version ${result.version})`);
    },
  },
];
