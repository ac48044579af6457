import { Type, type TObject, type TProperties, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { BanstreamError } from '@banstream/core';

/** The validated, frozen configuration object for a set of declared variables. */
export type ConfigOf<P extends TProperties> = Readonly<Static<TObject<P>>>;

export type EnvSource = Readonly<Record<string, string | undefined>>;

/**
 * Reads the variables a service declares, applies defaults, converts strings to
 * numbers and booleans, validates, and returns a frozen object. Any problem becomes
 * one CONFIG_INVALID error listing every bad variable with the form it expects, so
 * an operator fixes them all in one go.
 */
export function loadConfig<P extends TProperties>(properties: P, source: EnvSource): Readonly<Static<TObject<P>>> {
  // Widened for the generic helpers below; the precise type is restored on return.
  const schema = Type.Object(properties) as unknown as TObject;
  const raw: Record<string, string> = {};
  for (const name of Object.keys(properties)) {
    const value = source[name];
    // An empty variable counts as unset, as in most shells' `VAR=` idiom.
    if (value !== undefined && value !== '') raw[name] = value;
  }
  const converted = Value.Convert(schema, Value.Default(schema, { ...raw }));
  const problems = describeProblems(schema, converted, raw);
  if (problems.length > 0) {
    throw new BanstreamError('CONFIG_INVALID', `invalid configuration:\n  ${problems.join('\n  ')}`, {
      details: { variables: problems.map((p) => p.split(':')[0]) },
    });
  }
  return Object.freeze(converted as Static<TObject<P>>);
}

function describeProblems(schema: TObject, value: unknown, raw: Record<string, string>): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const error of Value.Errors(schema, value)) {
    const name = error.path.split('/')[1] ?? error.path;
    if (name === '' || seen.has(name)) continue;
    seen.add(name);
    const expected = (schema.properties[name] as { expected?: string } | undefined)?.expected ?? error.message;
    const got = raw[name];
    problems.push(got === undefined ? `${name}: missing; expected ${expected}` : `${name}: expected ${expected} (got ${JSON.stringify(redactIfSecret(name, got))})`);
  }
  return problems;
}

/** Never echo secrets (URLs with passwords, tokens) back into logs or terminals. */
function redactIfSecret(name: string, value: string): string {
  // Webhook URLs carry their token in the path (Slack's do).
  if (/TOKEN|SECRET|PASSWORD|WEBHOOK_URL/.test(name)) return '<redacted>';
  return value.replace(/\/\/([^:/@]*):([^@]*)@/, '//$1:<redacted>@');
}
