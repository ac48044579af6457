/** What `banstream` exits with; scripts can act on each. README "The CLI" lists them. */
export const EXIT = {
  ok: 0,
  /** The server failed, or a backtest did. */
  failed: 1,
  /** Unknown command or option, missing argument. */
  usage: 2,
  /** Invalid input: a policy file, a subject, a duration (400). */
  invalid: 3,
  /** No token, or one the API does not know (401). */
  unauthenticated: 4,
  /** The token's role may not do this (403). */
  forbidden: 5,
  /** No such policy, ban, entry or backtest (404). */
  notFound: 6,
  /** Conflict, rate limited, or a backtest already running (409, 429). */
  conflict: 7,
  /** The API cannot be reached or is not ready (connection refused, 503). */
  unavailable: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export function exitForStatus(status: number): ExitCode {
  if (status === 400 || status === 422) return EXIT.invalid;
  if (status === 401) return EXIT.unauthenticated;
  if (status === 403) return EXIT.forbidden;
  if (status === 404) return EXIT.notFound;
  if (status === 409 || status === 429) return EXIT.conflict;
  if (status === 502 || status === 503 || status === 504) return EXIT.unavailable;
  return EXIT.failed;
}

/** An error that ends the command with a message and an exit code. */
export class CliError extends Error {
  /** `problem`: the API's stable error code, when the error is an API answer (NETWORK_TOO_WIDE…). */
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly details: string[] = [],
    readonly problem?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
