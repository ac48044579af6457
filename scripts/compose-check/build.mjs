// A service's `build:`: the context and Dockerfile exist, every build arg is an
// ARG of that Dockerfile, SERVICE names a workspace, and no two built services
// share an image tag. Looks at the files on disk.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isMap } from './model.mjs';

/** imagesBuilt: image tag → service name, shared across services (this call adds svc's). */
export function checkBuild(name, svc, where, imagesBuilt, { projectDir, rel }) {
  if (svc.build === undefined) return [];
  const problems = [];
  const build = typeof svc.build === 'string' ? { context: svc.build } : svc.build;
  if (!isMap(build)) return [`${where}.build: must be a path or a mapping`];
  const context = path.resolve(projectDir, String(build.context ?? '.'));
  if (!existsSync(context) || !statSync(context).isDirectory()) {
    problems.push(`${where}.build.context: ${rel(context)} is not a directory`);
  } else {
    const dockerfile = path.resolve(context, String(build.dockerfile ?? 'Dockerfile'));
    if (!existsSync(dockerfile)) {
      problems.push(`${where}.build.dockerfile: ${rel(dockerfile)} does not exist`);
    } else {
      const declared = declaredArgs(readFileSync(dockerfile, 'utf8'));
      for (const [arg, value] of Object.entries(buildArgsOf(build))) {
        if (!declared.has(arg)) problems.push(`${where}.build.args.${arg}: ${rel(dockerfile)} declares no \`ARG ${arg}\``);
        if (arg === 'SERVICE' && !existsSync(path.join(projectDir, 'services', String(value), 'package.json'))) {
          problems.push(`${where}.build.args.SERVICE=${value}: services/${value}/package.json does not exist`);
        }
      }
    }
  }
  // Two built services tagged alike would overwrite each other's image.
  if (typeof svc.image === 'string') {
    if (imagesBuilt.has(svc.image)) problems.push(`${where}.image: ${svc.image} is also built by ${imagesBuilt.get(svc.image)}`);
    imagesBuilt.set(svc.image, name);
  }
  return problems;
}

function declaredArgs(dockerfileText) {
  return new Set([...dockerfileText.matchAll(/^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)/gim)].map((m) => m[1]));
}

/** build.args: list of KEY=VALUE or mapping. */
function buildArgsOf(build) {
  return Array.isArray(build.args) ? Object.fromEntries(build.args.map((a) => String(a).split(/=(.*)/s).slice(0, 2))) : isMap(build.args) ? build.args : {};
}
