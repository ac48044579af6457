// Debian packages the project needs, installed when missing and we may (root with apt-get).
import { execFileSync } from 'node:child_process';
import { StackError, which } from './processes.mjs';

/** Makes sure `binary` is on PATH, installing Debian's `pkg` if it is not and we are root. */
export function ensureDebianPackage(binary, pkg, log = console.log) {
  if (which(binary)) return;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || !which('apt-get')) {
    throw new StackError(`${binary} not found: install it (Debian: sudo apt-get install ${pkg}), then run this again.`);
  }
  log(`${binary} not found: installing Debian package ${pkg} ...`);
  try {
    execFileSync('sh', ['-c', `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${pkg} >/dev/null`], { stdio: 'inherit' });
  } catch (cause) {
    throw new StackError(`could not install ${pkg} with apt-get: ${cause.message}`);
  }
  if (!which(binary)) throw new StackError(`apt-get finished but ${binary} is still not on PATH`);
}
