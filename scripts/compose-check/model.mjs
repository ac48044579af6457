// Reading a Compose file: the parts the checks share, and the service fields that
// accept several syntaxes, normalised to one shape. Readers that can find a
// malformed field return [value, problems].
import path from 'node:path';

export const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The services of an interpolated compose file (whose `services` is a non-empty mapping), and the names around them. */
export function stackOf(compose) {
  const services = compose.services;
  const serviceNames = new Set(Object.keys(services));
  const hostNames = new Set(serviceNames);
  for (const s of Object.values(services)) if (isMap(s) && typeof s.hostname === 'string') hostNames.add(s.hostname);
  const declaredVolumes = isMap(compose.volumes) ? compose.volumes : {};
  return { services, serviceNames, hostNames, declaredVolumes };
}

/** environment: mapping or list of KEY=VALUE; returns [plain object, problems]. */
export function environmentOf(svc, where) {
  const env = svc.environment;
  if (env === undefined || env === null) return [{}, []];
  if (Array.isArray(env)) {
    const out = {};
    for (const item of env) {
      const s = String(item);
      const i = s.indexOf('=');
      out[i === -1 ? s : s.slice(0, i)] = i === -1 ? undefined : s.slice(i + 1);
    }
    return [out, []];
  }
  if (isMap(env)) {
    const problems = [];
    for (const [k, v] of Object.entries(env)) {
      if (v !== null && typeof v === 'object') problems.push(`${where}.environment.${k}: must be a string, number or boolean`);
    }
    return [env, problems];
  }
  return [{}, [`${where}.environment: must be a mapping or a list`]];
}

/** depends_on: list or mapping; returns [{ target: spec }, problems]. */
export function dependsOnOf(svc, where) {
  const d = svc.depends_on;
  if (d === undefined) return [{}, []];
  if (Array.isArray(d)) return [Object.fromEntries(d.map((t) => [String(t), { condition: 'service_started' }])), []];
  if (isMap(d)) return [d, []];
  return [{}, [`${where}.depends_on: must be a list or a mapping`]];
}

export function hasHealthcheck(svc) {
  const h = svc?.healthcheck;
  return isMap(h) && h.disable !== true && h.test !== undefined && !(Array.isArray(h.test) && h.test[0] === 'NONE');
}

/** The absolute host path bind-mounted at containerPath in svc, if any. */
export function bindSourceFor(svc, containerPath, projectDir) {
  for (const v of Array.isArray(svc?.volumes) ? svc.volumes : []) {
    const [source, target] = isMap(v) ? [v.source, v.target] : String(v).split(':');
    if (target === containerPath && source) return path.resolve(projectDir, source);
  }
  return undefined;
}
