import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ApiClient, connection } from './client.js';
import type { Command, Io } from './command.js';
import { alertCommands } from './commands/alerts.js';
import { allowCommands } from './commands/allow.js';
import { auditCommand } from './commands/audit.js';
import { backtestCommand } from './commands/backtest.js';
import { banCommands } from './commands/bans.js';
import { feedCommands } from './commands/feeds.js';
import { policyCommands } from './commands/policies.js';
import { tokenCommand } from './commands/token.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';

export const COMMANDS: readonly Command[] = [...policyCommands, ...banCommands, ...allowCommands, ...feedCommands, ...alertCommands, auditCommand, backtestCommand, tokenCommand];

const GLOBAL = {
  url: { type: 'string' },
  'token-file': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

export function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'usage: banstream COMMAND [options]',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'options for every command:',
    '  --url URL          the control API (BANSTREAM_URL; default http://127.0.0.1:8083)',
    '  --token-file FILE  a file holding the API token (BANSTREAM_TOKEN_FILE; or the token in BANSTREAM_TOKEN)',
    '  --json             JSON for scripts instead of tables',
    "  -h, --help         this help, or a command's usage",
    '',
    'exit codes: 0 ok, 1 failed, 2 usage, 3 invalid input, 4 unauthenticated, 5 forbidden, 6 not found, 7 conflict or rate limited, 8 API unreachable',
  ].join('\n');
}

/** Runs one command line; returns the exit code. Errors are printed to stderr, never thrown. */
export async function run(argv: readonly string[], io: Io): Promise<ExitCode> {
  const command = COMMANDS.find((c) => {
    const words = c.name.split(' ');
    return words.every((w, i) => argv[i] === w);
  });
  if (!command) {
    const help = argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h';
    (help ? io.stdout : io.stderr).write(`${help ? '' : `banstream: unknown command ${JSON.stringify(argv.slice(0, 2).join(' '))}\n\n`}${usage()}\n`);
    return help ? EXIT.ok : EXIT.usage;
  }
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: argv.slice(command.name.split(' ').length), options: { ...GLOBAL, ...command.options }, allowPositionals: true, strict: true });
    } catch (error) {
      throw new CliError(`${(error as Error).message}\nusage: ${command.usage}`, EXIT.usage);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      io.stdout.write(`usage: ${command.usage}\n${command.summary}\n`);
      return EXIT.ok;
    }
    if (positionals.length !== (command.args ?? 0)) throw new CliError(`expected ${command.args ?? 0} argument(s), got ${positionals.length}\nusage: ${command.usage}`, EXIT.usage);
    const url = typeof values.url === 'string' ? values.url : undefined;
    const tokenFile = typeof values['token-file'] === 'string' ? values['token-file'] : undefined;
    const code = await command.run({
      args: positionals,
      values,
      json: values.json === true,
      io,
      api: () => new ApiClient(connection({ ...(url ? { url } : {}), ...(tokenFile ? { tokenFile } : {}) }, io.env)),
      // A block body: write's boolean must never become the command's exit code.
      print: (text) => {
        io.stdout.write(`${text}\n`);
      },
    });
    return code ?? EXIT.ok;
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr.write(`banstream: ${error.message}\n${error.details.map((d) => `  ${d}\n`).join('')}`);
      return error.exitCode;
    }
    io.stderr.write(`banstream: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    return EXIT.failed;
  }
}
