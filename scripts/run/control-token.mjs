// The local run's API token: made once, kept in the stack folder (mode 0600), and
// given to the control service only as its SHA-256 (a tokens file), never in a log.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Returns { tokenFile, tokensFile }: the admin token for the CLI, the hash file for the service. */
export function localControlToken(stackDir) {
  mkdirSync(stackDir, { recursive: true });
  const tokenFile = join(stackDir, 'control-admin.token');
  const tokensFile = join(stackDir, 'control-tokens');
  if (!existsSync(tokenFile)) writeFileSync(tokenFile, `bst_${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  const token = readFileSync(tokenFile, 'utf8').trim();
  const hash = createHash('sha256').update(token).digest('hex');
  writeFileSync(tokensFile, `# made by npm start: the admin token is in ${tokenFile}\nlocal-admin:admin:${hash}\n`, { mode: 0o600 });
  return { tokenFile, tokensFile };
}
