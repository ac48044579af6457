// A service's node flags: `banstream.nodeFlags` in services/NAME/package.json. The one
// reader for every launcher (npm start, the tests, the benchmarks); services/Dockerfile
// reads the same field with `node -p`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../stack/settings.mjs';

export function serviceNodeFlags(service) {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'services', service, 'package.json'), 'utf8'));
  return manifest.banstream?.nodeFlags ?? [];
}
