import type { PlannedChange } from '@banstream/api';

export type { PlannedChange };

const SIGN = { create: '+', update: '~', unchanged: '=', delete: '-' } as const;

/** The plan as a diff people read: one block per policy, the changed fields under it, a summary line. */
export function renderPlan(changes: readonly PlannedChange[], applied: boolean): string {
  const lines: string[] = [];
  for (const c of changes) {
    if (c.action === 'create') {
      lines.push(`${SIGN.create} ${c.id}  (new, version 1)`);
      for (const field of ['mode', 'key', 'threshold', 'costs', 'action', 'enforcement', 'match']) {
        const value = (c.after as Record<string, unknown>)[field];
        if (value !== undefined) lines.push(`    ${field}: ${show(value)}`);
      }
    } else if (c.action === 'update') {
      lines.push(`${SIGN.update} ${c.id}  (version ${c.version} → ${c.version + 1})`);
      for (const f of c.fields) lines.push(`    ${f.path}: ${f.before === undefined ? '(none)' : show(f.before)} → ${f.after === undefined ? '(none)' : show(f.after)}`);
    } else if (c.action === 'delete') {
      lines.push(`${SIGN.delete} ${c.id}  (delete version ${c.version})`);
    } else {
      lines.push(`${SIGN.unchanged} ${c.id}  (unchanged, version ${c.version})`);
    }
  }
  const n = (a: PlannedChange['action']) => changes.filter((c) => c.action === a).length;
  lines.push(
    '',
    applied
      ? `Applied: ${n('create')} created, ${n('update')} updated, ${n('delete')} deleted, ${n('unchanged')} unchanged.`
      : `Plan: ${n('create')} to create, ${n('update')} to update, ${n('delete')} to delete, ${n('unchanged')} unchanged. Dry run: nothing was changed.`,
  );
  return lines.join('\n');
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
