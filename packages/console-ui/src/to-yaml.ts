/**
 * A JSON value as block YAML, for the policy editor: a stored policy is shown as its
 * author would write it. Strings that YAML could read as something else (numbers,
 * booleans, null, leading indicators, `: `, ` #`…) are written as JSON strings, which
 * are YAML double-quoted scalars, so parsing the text gives back the same value
 * (to-yaml.test.ts checks that against the yaml package).
 */
export function toYaml(value: unknown): string {
  return `${block(value, 0).replace(/^\n/, '')}\n`;
}

function block(value: unknown, indent: number): string {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return ' []';
    return value
      .map((v) => {
        if (isObject(v) && Object.keys(v).length > 0) {
          const inner = block(v, indent + 2).replace(/^\n/, '');
          return `\n${pad}- ${inner.slice(indent + 2)}`;
        }
        if (Array.isArray(v) && v.length > 0) return `\n${pad}-${block(v, indent + 2)}`;
        return `\n${pad}- ${scalar(v)}`;
      })
      .join('');
  }
  if (isObject(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return ' {}';
    return entries
      .map(([k, v]) => {
        const key = plainSafe(k) ? k : quote(k);
        if ((isObject(v) && Object.keys(v).length > 0) || (Array.isArray(v) && v.length > 0)) return `\n${pad}${key}:${block(v, indent + 2)}`;
        return `\n${pad}${key}:${block(v, indent + 2)}`;
      })
      .join('');
  }
  return ` ${scalar(value)}`;
}

function scalar(v: unknown): string {
  if (Array.isArray(v)) return '[]';
  if (isObject(v)) return '{}';
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'boolean') return String(v);
  const s = String(v);
  return plainSafe(s) ? s : quote(s);
}

/** A YAML double-quoted scalar: JSON's escapes, plus the characters YAML does not allow raw (DEL, C1 controls, line separators, BOM). */
function quote(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Strings safe to write unquoted: letters, digits and a few inner punctuation marks, not a YAML keyword or number. */
function plainSafe(s: string): boolean {
  if (!/^[A-Za-z_/][A-Za-z0-9_./-]*$/.test(s)) return false;
  return !/^(true|false|yes|no|on|off|y|n|null|~|nan|inf|\.nan|\.inf)$/i.test(s);
}
