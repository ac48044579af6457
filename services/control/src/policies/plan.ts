import type { PlannedChange } from '@banstream/api';
import type { PolicySpec } from '@banstream/core';
import { diffJson, jsonEqual } from './diff.js';
import { specOfRecord } from './records.js';
import type { PolicyRecord } from '@banstream/schemas';

/**
 * What applying a set of validated policies would change, policy by policy, in id
 * order: new ids are created, changed ones updated (with the fields that change),
 * equal ones left alone. With `prune`, policies absent from the set are deleted,
 * so a folder of files can be the whole truth.
 */
export function planApply(current: ReadonlyMap<string, PolicyRecord>, wanted: readonly PolicySpec[], prune: boolean): PlannedChange[] {
  const plan: PlannedChange[] = [];
  const wantedIds = new Set(wanted.map((s) => s.id));
  for (const spec of wanted) {
    const record = current.get(spec.id);
    if (!record) {
      plan.push({ id: spec.id, action: 'create', after: spec });
      continue;
    }
    const before = specOfRecord(record);
    if (before && jsonEqual(before, spec)) plan.push({ id: spec.id, action: 'unchanged', version: record.version });
    else plan.push({ id: spec.id, action: 'update', version: record.version, fields: diffJson(before ?? {}, spec), after: spec });
  }
  if (prune) for (const [id, record] of current) if (!wantedIds.has(id)) plan.push({ id, action: 'delete', version: record.version });
  return plan.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
