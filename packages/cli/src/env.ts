/**
 * Every variable the banstream command reads, in the shape of the services'
 * declarations (`default`, `expected`, `description`) so that
 * docs/operations/configuration.md lists them too. The CLI validates none of them.
 */
export const DEFAULT_CONTROL_URL = 'http://127.0.0.1:8083';

export const cliEnv = {
  BANSTREAM_URL: { default: DEFAULT_CONTROL_URL, expected: 'an http:// or https:// URL', description: 'where the control API is; `--url` wins over it' },
  BANSTREAM_TOKEN: { optional: true, expected: 'an API token', description: 'the API token to send; never give it on the command line' },
  BANSTREAM_TOKEN_FILE: { optional: true, expected: 'a file path', description: 'a file holding the API token, read instead of `BANSTREAM_TOKEN`; `--token-file` wins over it' },
} as const;
