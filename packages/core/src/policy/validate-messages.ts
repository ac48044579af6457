import type { TSchema } from '@sinclair/typebox';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';

/**
 * Turns TypeBox's errors (JSON-pointer paths, "Expected union value") into the
 * lines a person editing a policy file can act on: `policies[0].treshold:
 * unknown field (did you mean "threshold"?)`.
 */

export type PathSegment = string | number;

/** One problem, located by segments so callers can map it back to a source position. */
export interface PolicyIssue {
  readonly at: readonly PathSegment[];
  /** May name another place as `{related}` (`duplicate of {related} "login"`), rendered by describeIssue. */
  readonly message: string;
  readonly related?: readonly PathSegment[];
}

/** The message with `{related}` spelled by `pathOf`, so a caller that re-roots paths re-roots both. */
export function describeIssue(issue: PolicyIssue, pathOf: (at: readonly PathSegment[]) => string = formatPath): string {
  const related = issue.related;
  return related === undefined ? issue.message : issue.message.replace('{related}', pathOf(related));
}

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** `['policies', 0, 'action', 'banDuration']` → `policies[0].action.banDuration`; the root is `(root)`. */
export function formatPath(at: readonly PathSegment[]): string {
  let out = '';
  for (const seg of at) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (PLAIN_KEY.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out === '' ? '(root)' : out;
}

/** JSON pointer → segments; walks the value so `/0` is an index only inside arrays. */
export function pointerToSegments(pointer: string, root: unknown): PathSegment[] {
  if (pointer === '') return [];
  const out: PathSegment[] = [];
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const seg: PathSegment = Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(key) ? Number(key) : key;
    out.push(seg);
    node = isRecord(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[seg] : undefined;
  }
  return out;
}

/** Flattens TypeBox errors into issues, resolving unions to the variant the user meant. */
export function* issuesFrom(errors: Iterable<ValueError>, root: unknown): Generator<PolicyIssue> {
  for (const error of errors) {
    const at = pointerToSegments(error.path, root);
    if (error.type === ValueErrorType.Union) {
      yield* unionIssues(error, at, root);
      continue;
    }
    const message = messageFor(error, at, root);
    if (message !== undefined) yield { at, message };
  }
}

function unionIssues(error: ValueError, at: PathSegment[], root: unknown): Iterable<PolicyIssue> {
  const variants = (error.schema.anyOf ?? []) as TSchema[];
  if (variants.length > 0 && variants.every((v) => 'const' in v)) {
    return [{ at, message: `must be one of ${variants.map((v) => String(v.const)).join(', ')}` }];
  }
  const tag = discriminator(variants);
  if (tag !== undefined) {
    const value = error.value;
    if (!isRecord(value)) return [{ at, message: 'must be an object' }];
    const tags = variants.map((v) => (v.properties as Record<string, TSchema>)[tag]?.const as unknown);
    const chosen = tags.indexOf(value[tag]);
    const branch = error.errors[chosen];
    if (chosen >= 0 && branch !== undefined) return issuesFrom(branch, root);
    const allowed = `one of ${tags.map(String).join(', ')}`;
    return [{ at: [...at, tag], message: tag in value ? `must be ${allowed}` : `is required (${allowed})` }];
  }
  // Alternative spellings of one thing (a duration is `30s` or 30): say what it is.
  const described = variants.find((v) => typeof v.description === 'string');
  if (described !== undefined) return [{ at, message: describe(described.description as string) }];
  return [{ at, message: error.message.toLowerCase() }];
}

/** The property every variant pins to a literal (`type` for actions), if any. */
function discriminator(variants: TSchema[]): string | undefined {
  const first = variants[0];
  if (first === undefined || !variants.every((v) => isRecord(v.properties))) return undefined;
  const candidates = Object.keys(first.properties as object);
  return candidates.find((key) =>
    variants.every((v) => {
      const prop = (v.properties as Record<string, TSchema | undefined>)[key];
      return prop !== undefined && 'const' in prop;
    }),
  );
}

/** Patterns in schema.ts without a `description`; a description there wins over this table. */
const PATTERN_HINTS: Readonly<Record<string, string>> = {
  '^([01][0-9]|2[0-3]):[0-5][0-9]$': 'must be a local time HH:MM from 00:00 to 23:59',
  '^([01][0-9]|2[0-4]):[0-5][0-9]$': 'must be a local time HH:MM from 00:00 to 24:00',
  '^[A-Z]+$': 'must be an upper-case HTTP method such as GET',
  '^/': 'must start with /',
};

function describe(description: string): string {
  return /^(a|an) /.test(description) ? `must be ${description}` : `must match ${description}`;
}

function plural(n: unknown, word: string): string {
  return `${String(n)} ${word}${n === 1 ? '' : 's'}`;
}

function messageFor(error: ValueError, at: PathSegment[], root: unknown): string | undefined {
  const s = error.schema;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    case ValueErrorType.ObjectAdditionalProperties:
      return unknownField(error, at, root);
    case ValueErrorType.Object:
      return 'must be an object';
    case ValueErrorType.Array:
      return 'must be a list';
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${plural(s.minItems, 'item')}`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${plural(s.maxItems, 'item')}`;
    case ValueErrorType.ArrayUniqueItems:
      return 'must not repeat items';
    case ValueErrorType.Boolean:
      return 'must be true or false';
    case ValueErrorType.String:
      return 'must be a string';
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? 'must not be empty' : `must be at least ${plural(s.minLength, 'character')}`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${plural(s.maxLength, 'character')}`;
    case ValueErrorType.StringPattern:
      if (typeof s.description === 'string') return describe(s.description);
      return PATTERN_HINTS[s.pattern as string] ?? `must match the pattern ${String(s.pattern)}`;
    case ValueErrorType.StringFormat:
    case ValueErrorType.StringFormatUnknown:
      // date-time is not registered in TypeBox's FormatRegistry; validate-rules.ts checks it.
      return s.format === 'date-time' ? undefined : `must be a ${String(s.format)}`;
    case ValueErrorType.Integer:
      return 'must be an integer';
    case ValueErrorType.Number:
      return 'must be a number';
    case ValueErrorType.IntegerExclusiveMinimum:
    case ValueErrorType.NumberExclusiveMinimum:
      return `must be > ${String(s.exclusiveMinimum)}`;
    case ValueErrorType.IntegerExclusiveMaximum:
    case ValueErrorType.NumberExclusiveMaximum:
      return `must be < ${String(s.exclusiveMaximum)}`;
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return `must be >= ${String(s.minimum)}`;
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return `must be <= ${String(s.maximum)}`;
    case ValueErrorType.IntegerMultipleOf:
    case ValueErrorType.NumberMultipleOf:
      return `must be a multiple of ${String(s.multipleOf)}`;
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(s.const)}`;
    default:
      return error.message.toLowerCase();
  }
}

function unknownField(error: ValueError, at: PathSegment[], root: unknown): string {
  const field = at[at.length - 1];
  const parent = valueAt(root, at.slice(0, -1));
  const present = isRecord(parent) ? new Set(Object.keys(parent)) : new Set<string>();
  const known = Object.keys((error.schema.properties ?? {}) as object).filter((k) => !present.has(k));
  const guess = typeof field === 'string' ? suggest(field, known) : undefined;
  return guess === undefined ? 'unknown field' : `unknown field (did you mean "${guess}"?)`;
}

/** The closest known name within a small edit distance, ignoring case; typos, not synonyms. */
export function suggest(word: string, candidates: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

export function valueAt(root: unknown, at: readonly PathSegment[]): unknown {
  let node = root;
  for (const seg of at) {
    if (!isRecord(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string | number, unknown>)[seg];
  }
  return node;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
