// Bundles the console (src/main.tsx) into dist/assets/console.js with esbuild, copies its
// styles, and writes dist/index.html. The root `npm run build` runs this after `tsc -b`
// (which type-checks src/). Prints the sizes, gzip included, as one JSON line.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = dirname(fileURLToPath(import.meta.url));
const out = join(root, 'dist');
rmSync(join(out, 'assets'), { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });

await build({
  entryPoints: [join(root, 'src/main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: join(out, 'assets/console.js'),
  sourcemap: 'linked',
  legalComments: 'eof',
  logLevel: 'warning',
});
writeFileSync(join(out, 'assets/console.css'), readFileSync(join(root, 'src/console.css')));
writeFileSync(join(out, 'assets/favicon.svg'), readFileSync(join(root, 'src/favicon.svg')));
writeFileSync(join(out, 'index.html'), readFileSync(join(root, 'src/index.html')));

const size = (f) => {
  const body = readFileSync(join(out, 'assets', f));
  return { bytes: body.length, gzip: gzipSync(body, { level: 9 }).length };
};
const js = size('console.js');
const css = size('console.css');
console.log(JSON.stringify({ console_ui: 'built', js_bytes: js.bytes, js_gzip_bytes: js.gzip, css_bytes: css.bytes, css_gzip_bytes: css.gzip }));
