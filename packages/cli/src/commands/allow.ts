import type { Command } from '../command.js';
import { listCommand, text } from '../command.js';
import { CliError, EXIT } from '../exit-codes.js';
import { isoSeconds, relative } from '../format/table.js';
import { FORCE_HELP, FORCE_OPTION, hintForce } from './force.js';

interface AllowView {
  entry: string;
  reason: string;
  addedBy: string;
  addedAt: number;
  expiresAt: number | null;
  expired: boolean;
}

export const allowCommands: Command[] = [
  listCommand<AllowView>({
    name: 'allow list',
    summary: 'list the allowlist',
    path: '/v1/allowlist',
    field: 'entries',
    columns: (io) => [
      { header: 'ENTRY', value: (e) => e.entry },
      { header: 'EXPIRES', value: (e) => (e.expiresAt === null ? 'never' : e.expired ? 'expired' : relative(e.expiresAt, io.now())) },
      { header: 'ADDED', value: (e) => `${isoSeconds(e.addedAt)} by ${e.addedBy}` },
      { header: 'REASON', value: (e) => e.reason, max: 60 },
    ],
  }),
  {
    name: 'allow add',
    usage: `banstream allow add ENTRY --reason TEXT [--ttl 7d | --expires ISO-TIME] [--force] [--json]\n  ${FORCE_HELP}`,
    summary: 'allow an address, a network, user:<id> or apikey:<hash> over every ban and limit',
    args: 1,
    options: { reason: { type: 'string', short: 'r' }, ttl: { type: 'string' }, expires: { type: 'string' }, ...FORCE_OPTION },
    async run({ api, args, values, json, print }) {
      const reason = text(values, 'reason');
      if (!reason) throw new CliError('allow add needs --reason', EXIT.usage);
      const ttl = text(values, 'ttl');
      const expires = text(values, 'expires');
      const force = values.force === true ? { force: true } : {};
      const entry = await hintForce(api().post<AllowView>('/v1/allowlist', { entry: args[0], reason, ...(ttl ? { ttl } : {}), ...(expires ? { expiresAt: expires } : {}), ...force }));
      print(json ? JSON.stringify(entry, null, 2) : `allowed ${entry.entry}${entry.expiresAt === null ? '' : ` until ${isoSeconds(entry.expiresAt)}`}: ${entry.reason}`);
    },
  },
  {
    name: 'allow rm',
    usage: 'banstream allow rm ENTRY [--json]',
    summary: 'remove an allowlist entry',
    args: 1,
    async run({ api, args, json, print }) {
      const result = await api().delete<{ removed: string }>(`/v1/allowlist/${encodeURIComponent(args[0]!)}`);
      print(json ? JSON.stringify(result) : `removed ${result.removed} from the allowlist`);
    },
  },
];
