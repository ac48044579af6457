/**
 * Resolve options for dependency-cruiser (read as a webpack config): every workspace
 * import, `@banstream/x` or `@banstream/x/sub`, maps to the source file its package.json
 * `exports` entry is compiled from, so the boundary check needs no build, sees the files
 * tsc compiles, and a new package is covered without editing this file.
 */
const { readFileSync, readdirSync, existsSync } = require('node:fs');
const { join } = require('node:path');

function workspaceAliases(root) {
  const { workspaces = [] } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dirs = workspaces.flatMap((pattern) =>
    pattern.endsWith('/*')
      ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => `${pattern.slice(0, -2)}/${d.name}`)
      : [pattern],
  );
  const aliases = {};
  for (const dir of dirs) {
    const manifest = join(root, dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const { name, exports = {} } = JSON.parse(readFileSync(manifest, 'utf8'));
    for (const [subpath, target] of Object.entries(typeof exports === 'string' ? { '.': exports } : exports)) {
      const built = typeof target === 'string' ? target : target?.default;
      if (typeof built !== 'string' || !built.startsWith('./dist/')) continue;
      // `$`: an exact match, so `@banstream/x` does not swallow `@banstream/x/sub`.
      aliases[`${name}${subpath.slice(1)}$`] = join(root, dir, built.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));
    }
  }
  return aliases;
}

// The root is where the check runs (npm runs scripts there), so a fixture tree can use it too.
module.exports = { resolve: { alias: workspaceAliases(process.cwd()) } };
