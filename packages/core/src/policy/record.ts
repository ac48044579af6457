import type { PolicyMode } from './compiled.js';

/**
 * A policy as stored on the compacted policies topic (the Avro `policy` record): the
 * envelope the control API writes around the definition as JSON text. One of a
 * policy's three forms: PolicySpec (as written and validated), PolicyRecord (as
 * stored), CompiledPolicy (ready to match).
 */
export interface PolicyRecord {
  id: string;
  version: number;
  description: string;
  owner: string;
  /** An Avro enum; unknown future modes decode as 'preview'. */
  mode: PolicyMode;
  enabled: boolean;
  /** The policy as JSON text in the banstream policy language. */
  definition: string;
  updatedBy: string;
  updatedAt: number;
}
