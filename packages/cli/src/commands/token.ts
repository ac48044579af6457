import { newToken, ROLES, ROLES_TEXT, tokenEntryLine } from '@banstream/api';
import type { Command } from '../command.js';
import { text } from '../command.js';
import { CliError, EXIT } from '../exit-codes.js';

/** Local only: makes a token and the hash entry the control service is configured with. */
export const tokenCommand: Command = {
  name: 'token new',
  usage: `banstream token new --name NAME --role ${ROLES.join('|')} [--json]`,
  summary: 'make an API token (shown once) and its CONTROL_TOKENS entry (the hash only)',
  options: { name: { type: 'string' }, role: { type: 'string' } },
  async run({ values, json, print }) {
    const name = text(values, 'name');
    const role = ROLES.find((r) => r === text(values, 'role'));
    if (!name || !/^[A-Za-z0-9._@-]+$/.test(name)) throw new CliError('token new needs --name (letters, digits, . _ @ -)', EXIT.usage);
    if (!role) throw new CliError(`token new needs --role ${ROLES_TEXT}`, EXIT.usage);
    const token = newToken();
    const entry = tokenEntryLine(name, role, token);
    if (json) return print(JSON.stringify({ name, role, token, entry }));
    print(`token (give it to ${name}; it is not stored anywhere): ${token}`);
    print(`entry for CONTROL_TOKENS or CONTROL_TOKENS_FILE (the SHA-256 only): ${entry}`);
  },
};
