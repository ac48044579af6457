import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';

export interface Asset {
  body: Buffer;
  type: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
};
const MAX_ASSET_BYTES = 4 * 1024 * 1024;

/** The built console: index.html and the files of its assets/ folder, by name. */
export interface ConsoleAssets {
  index: Asset;
  files: ReadonlyMap<string, Asset>;
}

/**
 * The console's built files (packages/console-ui/dist), read once at start into memory:
 * a few hundred KB, served from a fixed map so no request path ever reaches the file
 * system. Undefined when the package is not built.
 */
export function loadConsoleAssets(dir = defaultAssetsDir()): ConsoleAssets | undefined {
  if (dir === undefined) return undefined;
  try {
    const index = readFileSync(join(dir, 'index.html'));
    const files = new Map<string, Asset>();
    const assetsDir = join(dir, 'assets');
    for (const name of readdirSync(assetsDir)) {
      const type = TYPES[extname(name)];
      const path = join(assetsDir, name);
      if (type === undefined || !statSync(path).isFile() || statSync(path).size > MAX_ASSET_BYTES) continue;
      files.set(name, { body: readFileSync(path), type });
    }
    return { index: { body: index, type: TYPES['.html']! }, files };
  } catch {
    return undefined;
  }
}

function defaultAssetsDir(): string | undefined {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('@banstream/console-ui/package.json')), 'dist');
  } catch {
    return undefined;
  }
}
