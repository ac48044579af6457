import { Type, type TObject, type TSchema } from '@sinclair/typebox';

/**
 * The JSON Schema of a record, derived from its Avro schema (the one contract), so
 * the JSON the gateway accepts and the Avro it writes cannot drift apart. Avro says
 * the shape; `rules` add what Avro cannot say (lengths, ranges, patterns), each for a
 * field the record really has. A field with a default may be left out (the default
 * applies); a field the record does not declare is refused, not silently dropped.
 */
export interface FieldRule {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  /** Maps: most entries, and the rule for each value. */
  maxProperties?: number;
  values?: FieldRule;
}

interface AvroField {
  name: string;
  type: unknown;
  default?: unknown;
}

export function jsonSchemaOfRecord(avroRecord: unknown, rules: Readonly<Record<string, FieldRule>> = {}): TObject {
  const record = avroRecord as { type?: unknown; name?: unknown; fields?: AvroField[] };
  if (record.type !== 'record' || !Array.isArray(record.fields)) throw new TypeError('jsonSchemaOfRecord: not an Avro record schema');
  const names = new Set(record.fields.map((f) => f.name));
  for (const name of Object.keys(rules)) {
    if (!names.has(name)) throw new TypeError(`jsonSchemaOfRecord: a rule names "${name}", which ${String(record.name)} does not have`);
  }
  const properties: Record<string, TSchema> = {};
  for (const field of record.fields) {
    const schema = schemaOf(field.type, rules[field.name], field.name);
    properties[field.name] = 'default' in field ? Type.Optional(schema) : schema;
  }
  return Type.Object(properties, { additionalProperties: false, title: String(record.name) });
}

/** The non-null branch of a `["null", T]` union, or the type itself. */
export function nonNullBranch(avroType: unknown): unknown {
  return Array.isArray(avroType) && avroType.length === 2 && avroType[0] === 'null' ? avroType[1] : avroType;
}

/** avsc encodes JS numbers as longs up to 2^53 - 2 in magnitude (its isSafeLong), one less than MAX_SAFE_INTEGER. */
const AVSC_LONG_LIMIT = 2 ** 53 - 2;

function schemaOf(avroType: unknown, rule: FieldRule | undefined, where: string): TSchema {
  if (Array.isArray(avroType)) {
    const branch = nonNullBranch(avroType);
    if (branch === avroType) throw unsupported(avroType, where);
    return Type.Union([Type.Null(), schemaOf(branch, rule, where)]);
  }
  const name = typeof avroType === 'string' ? avroType : (avroType as { type?: unknown }).type;
  const limits = numeric(rule);
  switch (name) {
    case 'string':
      return Type.String(textual(rule));
    case 'int':
      return Type.Integer({ minimum: -(2 ** 31), maximum: 2 ** 31 - 1, ...limits });
    case 'long': // also timestamp-millis: the logical type is the same long
      return Type.Integer({ minimum: -AVSC_LONG_LIMIT, maximum: AVSC_LONG_LIMIT, ...limits });
    case 'float':
    case 'double':
      return Type.Number(limits);
    case 'boolean':
      return Type.Boolean();
    case 'map': {
      const values = schemaOf((avroType as { values: unknown }).values, rule?.values, `${where} values`);
      return Type.Record(Type.String(), values, rule?.maxProperties === undefined ? {} : { maxProperties: rule.maxProperties });
    }
    default:
      throw unsupported(avroType, where);
  }
}

function textual(rule: FieldRule | undefined) {
  const out: { minLength?: number; maxLength?: number; pattern?: string } = {};
  if (rule?.minLength !== undefined) out.minLength = rule.minLength;
  if (rule?.maxLength !== undefined) out.maxLength = rule.maxLength;
  if (rule?.pattern !== undefined) out.pattern = rule.pattern;
  return out;
}

function numeric(rule: FieldRule | undefined) {
  const out: { minimum?: number; maximum?: number } = {};
  if (rule?.minimum !== undefined) out.minimum = rule.minimum;
  if (rule?.maximum !== undefined) out.maximum = rule.maximum;
  return out;
}

function unsupported(avroType: unknown, where: string): Error {
  // A schema change that needs a new type here must fail loudly, not validate loosely.
  return new TypeError(`jsonSchemaOfRecord: Avro type ${JSON.stringify(avroType)} of ${where} is not supported yet`);
}
