export { run, usage, COMMANDS } from './cli.js';
export { EXIT, type ExitCode } from './exit-codes.js';
export { cliEnv } from './env.js';
export { loadPolicyFiles } from './policy-files.js';
