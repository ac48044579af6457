import { CliError } from '../exit-codes.js';

/** The option every command that can override a guard rail takes. */
export const FORCE_OPTION = { force: { type: 'boolean' } } as const;

/** `--force`, in a command's usage and help. */
export const FORCE_HELP = '--force places it on a network wider than the server allows without it (default /8 IPv4, /32 IPv6); the audit records it as forced';

/** Runs a request; a NETWORK_TOO_WIDE refusal gets a hint that --force is the way, if that is what the user meant. */
export async function hintForce<T>(request: Promise<T>): Promise<T> {
  try {
    return await request;
  } catch (error) {
    if (!(error instanceof CliError) || error.problem !== 'NETWORK_TOO_WIDE') throw error;
    const hint = 'hint: if you mean a network this wide, run the command again with --force (the audit records it as forced)';
    throw new CliError(error.message, error.exitCode, [...error.details, hint], error.problem);
  }
}
