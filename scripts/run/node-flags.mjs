// A service's node flags: `banstream.nodeFlags` in services/NAME/package.json. The one
// reader for every launcher (npm start, the tests, the benchmarks); services/Dockerfile
// reads the same field with `node -p`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../stack/settings.mjs';

/** `root`: another checkout's (a build compared against this one); this one by default. */
export function serviceNodeFlags(service, root = REPO_ROOT) {
  const manifest = JSON.parse(readFileSync(join(root, 'services', service, 'package.json'), 'utf8'));
  return manifest.banstream?.nodeFlags ?? [];
}
