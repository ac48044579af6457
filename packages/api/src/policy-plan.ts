import type { PolicySpec } from '@banstream/core';

/** One changed leaf between two JSON values: `threshold.count: 20 → 30`. */
export interface FieldChange {
  path: string;
  /** undefined: the field was added. */
  before?: unknown;
  /** undefined: the field was removed. */
  after?: unknown;
}

/** One line of a plan: what POST /v1/policies/plan and /v1/policies/apply answer, policy by policy. */
export type PlannedChange =
  | { id: string; action: 'create'; after: PolicySpec }
  | { id: string; action: 'update'; version: number; fields: FieldChange[]; after: PolicySpec }
  | { id: string; action: 'unchanged'; version: number }
  | { id: string; action: 'delete'; version: number };
