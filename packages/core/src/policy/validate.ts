import { Value } from '@sinclair/typebox/value';
import { PolicyDocument, type PolicyDocumentSpec } from './schema.js';
import { crossFieldIssues } from './validate-rules.js';
import { describeIssue, formatPath, issuesFrom, type PolicyIssue } from './validate-messages.js';

export { describeIssue, formatPath, type PathSegment, type PolicyIssue } from './validate-messages.js';

/**
 * One problem in a policy document. Rendered as `${path}: ${message}`, e.g.
 * `policies[2].threshold.count: must be > 0`. `line` and `column` (1-based) are set
 * by parsePolicyText when the text was YAML and the path exists in it.
 */
export interface PolicyError {
  readonly path: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

export type PolicyValidation = { ok: true; document: PolicyDocumentSpec } | { ok: false; errors: PolicyError[] };

/**
 * Checks a parsed policy document against the schema and the cross-field rules,
 * reporting every problem at once (one per path, the most specific). On success the
 * document is a copy of the input with schema defaults applied (mode `preview`,
 * enabled, priority 0); the input is never modified.
 */
export function validatePolicyDocument(value: unknown): PolicyValidation {
  const issues = policyDocumentIssues(value);
  if (issues.length > 0) return { ok: false, errors: issues.map((i) => ({ path: formatPath(i.at), message: describeIssue(i) })) };
  // Defaults only after validation: Value.Default never hides an error, but Value.Clean
  // would drop unknown fields, so it is not used at all.
  return { ok: true, document: Value.Default(PolicyDocument, Value.Clone(value)) as PolicyDocumentSpec };
}

export function formatPolicyError(error: PolicyError): string {
  return `${error.path}: ${error.message}`;
}

/** The issues with their path segments, for callers that map them back to source positions. */
export function policyDocumentIssues(value: unknown): PolicyIssue[] {
  const all = [...issuesFrom(Value.Errors(PolicyDocument, value), value), ...crossFieldIssues(value)];
  const seen = new Set<string>();
  const unique = all.filter((issue) => {
    const path = formatPath(issue.at);
    if (seen.has(path)) return false;
    seen.add(path);
    return true;
  });
  // Group by policy / allowlist entry in document order; within one, schema issues come first.
  return unique
    .map((issue, order) => ({ issue, order }))
    .sort((a, b) => compareItems(a.issue.at, b.issue.at) || a.order - b.order)
    .map(({ issue }) => issue);
}

const ROOT_ORDER = ['policies', 'allowlist'];

function compareItems(a: PolicyIssue['at'], b: PolicyIssue['at']): number {
  const rank = (at: PolicyIssue['at']) => {
    const i = ROOT_ORDER.indexOf(String(at[0]));
    return i < 0 ? ROOT_ORDER.length : i;
  };
  const index = (at: PolicyIssue['at']) => (typeof at[1] === 'number' ? at[1] : -1);
  return rank(a) - rank(b) || index(a) - index(b);
}
