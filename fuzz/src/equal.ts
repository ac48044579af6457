/**
 * Where two decoded values differ ('' when they do not): numbers by Object.is (NaN
 * equals NaN, 0 differs from -0), bytes by content, objects by their own keys and
 * values whatever their prototype (readers build records and maps differently).
 */
export function difference(a: unknown, b: unknown, path = ''): string {
  if (Object.is(a, b)) return '';
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    if (!(a instanceof Uint8Array && b instanceof Uint8Array) || Buffer.compare(a, b) !== 0) return path || '(root)';
    return '';
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return path || '(root)';
  if (Array.isArray(a) !== Array.isArray(b)) return path || '(root)';
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return `${path}.length`;
    for (let i = 0; i < a.length; i++) {
      const d = difference(a[i], bb[i], `${path}[${i}]`);
      if (d) return d;
    }
    return '';
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = Object.keys(ao);
  if (keys.length !== Object.keys(bo).length) return `${path}{keys}`;
  for (const k of keys) {
    if (!Object.hasOwn(bo, k)) return `${path}.${k}`;
    const d = difference(ao[k], bo[k], `${path}.${k}`);
    if (d) return d;
  }
  return '';
}

/** A value with only `fields` (in that order): what a projection reads of a record. */
export function pick(value: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) if (f in value) out[f] = value[f];
  return out;
}
