import type { ParseArgsConfig } from 'node:util';
import type { ApiClient } from './client.js';
import type { Column } from './format/table.js';
import { table } from './format/table.js';
import type { ExitCode } from './exit-codes.js';

export interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  now(): number;
  /** Resolves when the user asks to stop (Ctrl-C), for commands that run until then. */
  interrupted: Promise<void>;
}

export type Values = Record<string, string | boolean | string[] | boolean[] | undefined>;

export interface CommandContext {
  /** Positional arguments after the command words. */
  args: string[];
  values: Values;
  json: boolean;
  io: Io;
  api(): ApiClient;
  print(text: string): void;
}

export interface Command {
  /** `bans list`, `policies apply`… */
  name: string;
  usage: string;
  summary: string;
  options?: NonNullable<ParseArgsConfig['options']>;
  /** How many positional arguments it takes. */
  args?: number;
  run(ctx: CommandContext): Promise<ExitCode | void>;
}

export function text(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

/** A command that lists what one API path returns: a table, or the JSON with --json. */
export function listCommand<T>(spec: { name: string; summary: string; path: string; field: string; columns(io: Io): Column<T>[] }): Command {
  return {
    name: spec.name,
    usage: `banstream ${spec.name} [--json]`,
    summary: spec.summary,
    async run({ api, json, print, io }) {
      const items = (await api().get<Record<string, T[]>>(spec.path))[spec.field] ?? [];
      print(json ? JSON.stringify(items, null, 2) : table(items, spec.columns(io)));
    },
  };
}
