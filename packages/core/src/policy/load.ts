import { LineCounter, isAlias, isMap, isPair, isScalar, isSeq, parseDocument, type Document, type Node } from 'yaml';
import { BanstreamError } from '../errors.js';
import { findJsonProblem, lineColumn } from './load-json.js';
import type { PolicyDocumentSpec } from './schema.js';
import { describeIssue, formatPath, formatPolicyError, policyDocumentIssues, validatePolicyDocument, type PathSegment, type PolicyError } from './validate.js';

/**
 * Policy text (a file, an API body) → a validated PolicyDocument, or one
 * POLICY_INVALID error listing every problem. Reading the file is the caller's job.
 *
 * Accepted shapes, so a file can hold exactly what its author means:
 * - a document `{ policies: [...], allowlist: [...] }`;
 * - a list of policies `[{ id: ... }, ...]`, read as `{ policies: [...] }`;
 * - a single policy `{ id: ..., ... }`, read as `{ policies: [it] }`.
 * Error paths follow the text as written: `threshold.count` for a single policy,
 * `[2].threshold.count` for a list, `policies[2].threshold.count` for a document.
 */

export type PolicyTextFormat = 'yaml' | 'json' | 'auto';

export interface ParsePolicyOptions {
  /** Larger texts are refused before parsing; default 1 MiB. */
  maxBytes?: number;
  /** YAML alias expansions allowed (yaml's `maxAliasCount`); guards against alias bombs. Default 100. */
  maxAliasCount?: number;
}

export const MAX_POLICY_TEXT_BYTES = 1024 * 1024;
const DEFAULT_MAX_ALIAS_COUNT = 100;

type Shape = 'document' | 'list' | 'single';

export function parsePolicyText(text: string, format: PolicyTextFormat = 'auto', options: ParsePolicyOptions = {}): PolicyDocumentSpec {
  const maxBytes = options.maxBytes ?? MAX_POLICY_TEXT_BYTES;
  // Every UTF-8 byte count is at least the UTF-16 length, so the cheap test comes first.
  const bytes = text.length > maxBytes ? text.length : Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw invalid(`policy text is too large: ${bytes} bytes, the limit is ${maxBytes} bytes`, [], format);
  }
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const parsed = read(source, format, options.maxAliasCount ?? DEFAULT_MAX_ALIAS_COUNT);
  if (parsed.value === null || parsed.value === undefined) throw invalid('policy text is empty', [], parsed.format);

  const shape: Shape = Array.isArray(parsed.value) ? 'list' : isSingle(parsed.value) ? 'single' : 'document';
  const candidate = shape === 'list' ? { policies: parsed.value } : shape === 'single' ? { policies: [parsed.value] } : parsed.value;
  const result = validatePolicyDocument(candidate);
  if (result.ok) return result.document;

  const errors = policyDocumentIssues(candidate).map((issue): PolicyError => {
    const at = asWritten(issue.at, shape);
    const where = parsed.yaml === undefined ? undefined : yamlPosition(parsed.yaml, at);
    return { path: formatPath(at), message: describeIssue(issue, (related) => formatPath(asWritten(related, shape))), ...where };
  });
  const lines = errors.map((e) => `  ${formatPolicyError(e)}${e.line === undefined ? '' : ` (line ${e.line}, column ${e.column})`}`);
  throw invalid(`policy text is invalid (${count(errors.length)}):\n${lines.join('\n')}`, errors, parsed.format);
}

interface Parsed {
  value: unknown;
  format: 'yaml' | 'json';
  /** Kept to map error paths back to lines. */
  yaml?: { doc: Document.Parsed; lines: LineCounter };
}

function read(text: string, format: PolicyTextFormat, maxAliasCount: number): Parsed {
  if (format === 'json') return readJson(text);
  if (format === 'yaml') return readYaml(text, maxAliasCount);
  // JSON is YAML, but JSON.parse gives JSON's error messages; `{a: 1}` is still YAML.
  if (!/^\s*[[{]/.test(text)) return readYaml(text, maxAliasCount);
  try {
    return readJson(text);
  } catch (jsonError) {
    try {
      return readYaml(text, maxAliasCount);
    } catch {
      throw jsonError;
    }
  }
}

function readJson(text: string): Parsed {
  const problem = findJsonProblem(text);
  if (problem !== undefined) {
    const { line, column } = lineColumn(text, problem.offset);
    const error = { path: `line ${line}, column ${column}`, message: problem.message, line, column };
    throw invalid(`policy text is not valid JSON:\n  ${formatPolicyError(error)}`, [error], 'json');
  }
  try {
    return { value: JSON.parse(text) as unknown, format: 'json' };
  } catch (err) {
    // Only if the scanner and V8 ever disagree: still a clean POLICY_INVALID.
    throw invalid(`policy text is not valid JSON: ${(err as Error).message.slice(0, 200)}`, [], 'json', err);
  }
}

function readYaml(text: string, maxAliasCount: number): Parsed {
  const lines = new LineCounter();
  // merge: `<<: *defaults` lets policies share a block; uniqueKeys: a repeated key is an error, not "last wins".
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, merge: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const errors = doc.errors.map((e): PolicyError => {
      const { line, col: column } = lines.linePos(e.pos[0]);
      const message = e.code === 'MULTIPLE_DOCS' ? 'a policy text holds one YAML document: remove the "---" or split the file' : e.message;
      return { path: `line ${line}, column ${column}`, message, line, column };
    });
    throw invalid(`policy text is not valid YAML:\n${errors.map((e) => `  ${formatPolicyError(e)}`).join('\n')}`, errors, 'yaml');
  }
  try {
    return { value: doc.toJS({ maxAliasCount }), format: 'yaml', yaml: { doc, lines } };
  } catch (err) {
    // yaml throws a ReferenceError when aliases expand past maxAliasCount.
    const reason = err instanceof Error ? err.message : String(err);
    throw invalid(`policy text is not valid YAML: ${reason} (more than ${maxAliasCount} alias expansions)`, [], 'yaml', err);
  }
}

function isSingle(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'id' in value && !('policies' in value);
}

/** Issue paths are on the wrapped document; show them as the author wrote the text. */
function asWritten(at: readonly PathSegment[], shape: Shape): readonly PathSegment[] {
  if (shape === 'list' && at[0] === 'policies') return at.slice(1);
  if (shape === 'single' && at[0] === 'policies' && at[1] === 0) return at.slice(2);
  return at;
}

/** Line and column of the deepest node on `at` (a missing field points at its parent). */
function yamlPosition(yaml: NonNullable<Parsed['yaml']>, at: readonly PathSegment[]): { line: number; column: number } | undefined {
  let node: unknown = yaml.doc.contents;
  let offset: number | undefined = rangeStart(node);
  for (const seg of at) {
    if (isAlias(node)) node = node.resolve(yaml.doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && (isScalar(p.key) ? p.key.value : p.key) === seg);
      if (pair === undefined) break;
      offset = rangeStart(pair.key) ?? offset; // point at `count:`, not at the value after it
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
      offset = rangeStart(node) ?? offset;
    } else break;
  }
  if (offset === undefined) return undefined;
  const { line, col } = yaml.lines.linePos(offset);
  return { line, column: col };
}

function rangeStart(node: unknown): number | undefined {
  return typeof node === 'object' && node !== null && 'range' in node ? (node as Node).range?.[0] : undefined;
}

function count(n: number): string {
  return n === 1 ? '1 error' : `${n} errors`;
}

function invalid(message: string, errors: PolicyError[], format: PolicyTextFormat, cause?: unknown): BanstreamError {
  return new BanstreamError('POLICY_INVALID', message, { cause, details: { errors, format } });
}
