// Checks each service in turn. Problems are listed service by service, in the
// order of the checks below, so related problems stay together in the output.
import { checkEnvironment } from './banstream.mjs';
import { checkBuild } from './build.mjs';
import { checkDependsOn } from './dependencies.mjs';
import { environmentOf, isMap } from './model.mjs';
import { checkServiceKeys } from './spec.mjs';
import { checkHealthcheck, checkPorts, checkVolumes } from './structure.mjs';

/** stack: from stackOf; ctx: { projectDir, rel }. Returns { problems, unusedVolumes }. */
export function checkServices(stack, ctx) {
  const { services, hostNames, declaredVolumes } = stack;
  const problems = [];
  // Shared across services: duplicates are reported on the second service.
  const usedHostPorts = new Map();
  const imagesBuilt = new Map();
  const usedVolumes = new Set();

  for (const [name, svc] of Object.entries(services)) {
    const where = `services.${name}`;
    if (!isMap(svc)) {
      problems.push(`${where}: must be a mapping`);
      continue;
    }
    problems.push(...checkServiceKeys(svc, where));
    if (svc.image === undefined && svc.build === undefined) problems.push(`${where}: needs \`image\` or \`build\``);
    problems.push(...checkBuild(name, svc, where, imagesBuilt, ctx));
    problems.push(...checkDependsOn(name, svc, where, stack));
    problems.push(...checkHealthcheck(svc, where));
    problems.push(...checkPorts(name, svc, where, usedHostPorts));
    problems.push(...checkVolumes(svc, where, declaredVolumes, usedVolumes, ctx));
    const [env, envProblems] = environmentOf(svc, where);
    problems.push(...envProblems, ...checkEnvironment(name, env, where, hostNames));
  }

  const unusedVolumes = Object.keys(declaredVolumes).filter((v) => !usedVolumes.has(v));
  return { problems, unusedVolumes };
}
