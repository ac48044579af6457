import { CliError } from '../exit-codes.js';

/** The option every command that can override a guard rail takes. */
export const FORCE_OPTION = { force: { type: 'boolean' } } as const;

/** `--force`, in a command's usage and help. */
export const FORCE_HELP = '--force places it on a network wider than the server allows without it (default /8 IPv4, /32 IPv6); the audit records it as forced';

/** `--force` of `bans add`: also a subject that names no client. */
export const BAN_FORCE_HELP =
  '--force places it on a network wider than the server allows without it (default /8 IPv4, /32 IPv6), or on a subject that names no client (method:GET, country:FR); the audit records it as forced';

/** Runs a request; a NETWORK_TOO_WIDE or SUBJECT_TOO_BROAD refusal gets a hint that --force is the way, if that is what the user meant. */
export async function hintForce<T>(request: Promise<T>): Promise<T> {
  try {
    return await request;
  } catch (error) {
    if (!(error instanceof CliError) || (error.problem !== 'NETWORK_TOO_WIDE' && error.problem !== 'SUBJECT_TOO_BROAD')) throw error;
    const what = error.problem === 'NETWORK_TOO_WIDE' ? 'a network this wide' : 'to refuse everyone this subject matches';
    const hint = `hint: if you mean ${what}, run the command again with --force (the audit records it as forced)`;
    throw new CliError(error.message, error.exitCode, [...error.details, hint], error.problem);
  }
}
