import type { FieldChange } from '@banstream/api';

/**
 * The leaves that differ between two JSON values, in a stable order (keys sorted).
 * Arrays are compared whole: `key: ["ip"] → ["prefix"]` reads better than indexes.
 */
export function diffJson(before: unknown, after: unknown, path = ''): FieldChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => diffJson(before[k], after[k], path === '' ? k : `${path}.${k}`));
  }
  if (jsonEqual(before, after)) return [];
  return [{ path: path || '(root)', ...(before === undefined ? {} : { before }), ...(after === undefined ? {} : { after }) }];
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
