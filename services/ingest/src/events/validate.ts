import type { TObject, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import type { RequestEvent } from '@banstream/schemas';
import { jsonSchemaOfRecord, nonNullBranch, type FieldRule } from './avro-json-schema.js';
import type { TimeBound } from './event-rules.js';
import { normaliseEvent } from './normalise.js';

/** One reason an event of a batch is refused: its index in the batch, a JSON Pointer into it, and why. */
export interface EventProblem {
  index: number;
  path: string;
  message: string;
}

export type BatchCheck =
  | { ok: true; events: RequestEvent[] /** Each event's events-topic key, in the same order. */; keys: string[] }
  | { ok: false; invalidEvents: number; problems: EventProblem[]; truncated: boolean };

/**
 * Checks a batch against the JSON Schema derived from the Avro RequestEvent, then
 * the rules no schema can say (a parseable IP, header names), and returns the events
 * normalised: IPs in canonical text, methods upper case, hosts without port, paths
 * without query. The rule for a batch: all or nothing. One invalid event refuses the
 * whole batch, so an edge never has to work out which half was kept.
 */
export class EventValidator {
  readonly schema: TObject;
  private readonly check: TypeCheck<TObject>;
  /** For `["null", T]` fields: a checker of T alone, whose errors say more than "expected union value". */
  private readonly branches = new Map<string, TypeCheck<TSchema>>();

  constructor(
    avroRecord: unknown,
    rules: Readonly<Record<string, FieldRule>>,
    private readonly maxProblems = 100,
  ) {
    this.schema = jsonSchemaOfRecord(avroRecord, rules);
    this.check = TypeCompiler.Compile(this.schema);
    for (const field of (avroRecord as { fields: { name: string; type: unknown }[] }).fields) {
      if (nonNullBranch(field.type) === field.type) continue;
      const property = this.schema.properties[field.name] as unknown as { anyOf: TSchema[] };
      this.branches.set(field.name, TypeCompiler.Compile(property.anyOf[1]!));
    }
  }

  /** `time`: events dated further ahead than it allows are invalid. */
  validate(input: readonly unknown[], time: TimeBound): BatchCheck {
    const events: RequestEvent[] = [];
    const keys: string[] = [];
    const problems: EventProblem[] = [];
    let invalidEvents = 0;
    let truncated = false;
    for (let index = 0; index < input.length; index++) {
      const found: { path: string; message: string }[] = [];
      const normal = this.check.Check(input[index]) ? normaliseEvent(input[index] as RequestEvent, (path, message) => found.push({ path, message }), time) : undefined;
      if (normal !== undefined) {
        events.push(normal.event);
        keys.push(normal.key);
        continue;
      }
      if (found.length === 0) this.schemaProblems(input[index], found);
      invalidEvents++;
      for (const f of found) {
        if (problems.length < this.maxProblems) problems.push({ index, ...f });
        else truncated = true;
      }
    }
    return invalidEvents === 0 ? { ok: true, events, keys } : { ok: false, invalidEvents, problems, truncated };
  }

  /** The first error at each path; for a nullable field, the error of its non-null branch. */
  private schemaProblems(value: unknown, out: { path: string; message: string }[]): void {
    const seen = new Set<string>();
    for (const error of this.check.Errors(value)) {
      if (seen.has(error.path)) continue;
      seen.add(error.path);
      const field = error.path.split('/')[1] ?? '';
      const branch = error.type === ValueErrorType.Union && error.path === `/${field}` ? this.branches.get(field) : undefined;
      const inner = branch?.Errors(error.value).First();
      out.push(inner ? { path: `${error.path}${inner.path}`, message: `${inner.message}, or null` } : { path: error.path || '/', message: error.message });
    }
  }
}
