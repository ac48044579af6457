import type { Decoder, SchemaCatalog } from './catalog.js';
import { SCHEMA_NAMES, type Ban } from './types.js';

/**
 * A reader of bans that skips their evidence (any writer version). For enforcers: each
 * holds every ban, and an aggregator ban's evidence (up to a few kilobytes of top
 * values) is the control plane's to show, not a check's to need.
 */
export function banWithoutEvidence(catalog: SchemaCatalog): Decoder<Ban> {
  const schema = structuredClone(catalog.latest(SCHEMA_NAMES.ban).schema) as { fields: { name: string }[] };
  schema.fields = schema.fields.filter((f) => f.name !== 'evidence');
  return catalog.projection<Ban>(SCHEMA_NAMES.ban, schema);
}
