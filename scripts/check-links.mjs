#!/usr/bin/env node
// node scripts/check-links.mjs [FILE|DIR…]: every link in README.md and docs/ (or the
// files and folders given) must be relative and lead to a file or folder of the
// repository; a `#anchor` into a Markdown file must name one of its headings. Links in
// code blocks and code spans are not links. Prints each broken link as
// `file:line: target: why` and exits 1 if there is any.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const inputs = args.length > 0 ? args.map((a) => resolve(a)) : [join(root, 'README.md'), join(root, 'docs')];

function markdownFiles(path) {
  if (!existsSync(path)) return [];
  if (statSync(path).isFile()) return path.endsWith('.md') ? [path] : [];
  return readdirSync(path, { withFileTypes: true })
    .filter((e) => e.name !== 'node_modules' && !e.name.startsWith('.'))
    .flatMap((e) => markdownFiles(join(path, e.name)));
}

/** The text with fenced code blocks and code spans blanked, line breaks kept. */
function prose(text) {
  let inFence = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return '';
      }
      return inFence ? '' : line.replace(/`+[^`]*`+/g, (m) => ' '.repeat(m.length));
    })
    .join('\n');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchorsOf(file) {
  const seen = new Map();
  const anchors = new Set();
  let inFence = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = !inFence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function check(file) {
  const problems = [];
  const lines = prose(readFileSync(file, 'utf8')).split('\n');
  const link = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s*(\S+)/g;
  lines.forEach((line, index) => {
    for (const match of line.matchAll(link)) {
      const target = match[1] ?? match[2];
      const why = broken(file, target);
      if (why) problems.push(`${relative(root, file)}:${index + 1}: ${target}: ${why}`);
    }
  });
  return problems;
}

function broken(file, target) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return 'not a relative link (links stay inside the repository)';
  if (target.startsWith('/')) return 'an absolute path (write it relative to this file)';
  const [pathPart, anchor] = target.split('#', 2);
  const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
  if (path !== root && !path.startsWith(root + sep)) return 'outside the repository';
  if (!existsSync(path)) return 'no such file';
  if (anchor !== undefined && anchor !== '' && path.endsWith('.md') && !anchorsOf(path).has(anchor)) return `no heading #${anchor} in ${relative(root, path)}`;
  return undefined;
}

const files = inputs.flatMap(markdownFiles);
const problems = files.flatMap(check);
for (const p of problems) console.error(p);
console.log(`check-links: ${files.length} files, ${problems.length} broken link(s)`);
process.exit(problems.length > 0 ? 1 : 0);
