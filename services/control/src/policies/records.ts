import { formatPolicyError, validatePolicyDocument, type PolicySpec } from '@banstream/core';
import type { PolicyRecord } from '@banstream/schemas';
import type { FieldError } from '@banstream/platform';

export type SpecCheck = { ok: true; spec: PolicySpec } | { ok: false; errors: FieldError[] };

/**
 * A policy as written (API body, file entry) → the validated spec with defaults
 * (mode preview, enabled, priority 0), or every problem with its field path as in
 * the body (`threshold.count`, not `policies[0].threshold.count`). `pathPrefix`
 * places the paths inside a larger body (`policies[2].`).
 */
export function checkPolicy(body: unknown, pathPrefix = ''): SpecCheck {
  const validation = validatePolicyDocument({ policies: [body] });
  if (validation.ok) return { ok: true, spec: validation.document.policies[0]! };
  return {
    ok: false,
    errors: validation.errors.map((e) => {
      const inner = e.path.replace(/^policies\[0\]\.?/, '');
      return { path: `${pathPrefix}${inner}` || pathPrefix.replace(/\.$/, '') || '(policy)', message: e.message };
    }),
  };
}

/** Field errors as one line each, for messages. */
export function describeErrors(errors: readonly FieldError[]): string {
  return errors.map((e) => formatPolicyError(e)).join('; ');
}

/**
 * The spec a record holds: its definition with the record's envelope (mode,
 * enabled, description, owner), as PolicyBook reads it. Empty description or owner
 * are absent, so a file that gives none compares equal.
 */
export function specOfRecord(record: PolicyRecord): PolicySpec | undefined {
  let definition: unknown;
  try {
    definition = JSON.parse(record.definition);
  } catch {
    return undefined;
  }
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) return undefined;
  const merged: Record<string, unknown> = { ...definition, id: record.id, mode: record.mode, enabled: record.enabled };
  delete merged.description;
  delete merged.owner;
  if (record.description !== '') merged.description = record.description;
  if (record.owner !== '') merged.owner = record.owner;
  const checked = checkPolicy(merged);
  return checked.ok ? checked.spec : undefined;
}

/** The next record for `spec`: version one more than the current one, stamped with who and when. */
export function nextRecord(spec: PolicySpec, current: PolicyRecord | undefined, actor: string, nowMs: number): PolicyRecord {
  return {
    id: spec.id,
    version: (current?.version ?? 0) + 1,
    description: spec.description ?? '',
    owner: spec.owner ?? '',
    mode: spec.mode ?? 'preview',
    enabled: spec.enabled ?? true,
    definition: JSON.stringify(spec),
    updatedBy: actor,
    updatedAt: nowMs,
  };
}

/** What the API shows of a policy record. */
export function policyView(record: PolicyRecord) {
  const spec = specOfRecord(record);
  return {
    id: record.id,
    version: record.version,
    mode: record.mode,
    enabled: record.enabled,
    description: record.description,
    owner: record.owner,
    updatedBy: record.updatedBy,
    updatedAt: record.updatedAt,
    ...(spec ? { spec } : { invalid: 'the stored definition does not validate: enforcers and aggregators ignore this version' }),
  };
}
