// The shape of a service's healthcheck, ports and volumes, and what they point at:
// ports bind to loopback only, bind-mount sources exist inside the repository,
// named volumes are declared.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { isMap } from './model.mjs';

const DURATION = /^(\d+(\.\d+)?(us|ms|s|m|h))+$/;

export function checkHealthcheck(svc, where) {
  if (svc.healthcheck === undefined) return [];
  const h = svc.healthcheck;
  if (!isMap(h)) return [`${where}.healthcheck: must be a mapping`];
  if (h.disable === true) return [];
  const problems = [];
  const t = h.test;
  const okTest = (typeof t === 'string' && t.trim() !== '') || (Array.isArray(t) && t.length > 0 && (t[0] === 'NONE' || (['CMD', 'CMD-SHELL'].includes(t[0]) && t.length > 1)));
  if (!okTest) problems.push(`${where}.healthcheck.test: missing or malformed (a string, or a list starting with CMD, CMD-SHELL or NONE)`);
  for (const k of ['interval', 'timeout', 'start_period', 'start_interval']) {
    if (h[k] !== undefined && !DURATION.test(String(h[k]))) problems.push(`${where}.healthcheck.${k}: \`${h[k]}\` is not a duration such as 10s or 1m30s`);
  }
  if (h.retries !== undefined && !(Number.isInteger(Number(h.retries)) && Number(h.retries) > 0)) {
    problems.push(`${where}.healthcheck.retries: must be a positive integer`);
  }
  return problems;
}

/**
 * Loopback only (this stack has no authentication), no host port twice.
 * usedHostPorts: "ip:port" → service name, shared across services (this call adds svc's).
 */
export function checkPorts(name, svc, where, usedHostPorts) {
  const problems = [];
  for (const [i, p] of (Array.isArray(svc.ports) ? svc.ports : svc.ports === undefined ? [] : [null]).entries()) {
    const at = `${where}.ports[${i}]`;
    let hostIp;
    let hostPort;
    if (p === null) {
      problems.push(`${where}.ports: must be a list`);
      continue;
    } else if (isMap(p)) {
      hostIp = p.host_ip;
      hostPort = p.published;
    } else {
      ({ hostIp, hostPort } = parseShortPort(String(p)));
    }
    if (!hostIp || !isLoopback(String(hostIp))) {
      problems.push(`${at}: \`${isMap(p) ? JSON.stringify(p) : p}\` must bind to 127.0.0.1 (e.g. "127.0.0.1:8080:8080"); this stack has no authentication`);
    }
    if (hostPort !== undefined && hostPort !== '') {
      const key = `${hostIp ?? '*'}:${hostPort}`;
      if (usedHostPorts.has(key)) problems.push(`${at}: host port ${hostPort} is also published by ${usedHostPorts.get(key)}`);
      usedHostPorts.set(key, name);
    }
  }
  return problems;
}

function isLoopback(ip) {
  const bare = ip.replace(/^\[|\]$/g, '');
  return /^127\.\d+\.\d+\.\d+$/.test(bare) || bare === '::1';
}

/** Short port syntax: [HOST_IP:][HOST_PORT:]CONTAINER_PORT[/PROTOCOL] → { hostIp, hostPort }. */
function parseShortPort(spec) {
  const noProto = spec.replace(/\/(tcp|udp|sctp)$/, '');
  let hostIp;
  let rest = noProto;
  const v6 = /^\[([^\]]+)\]:(.*)$/.exec(noProto);
  if (v6) {
    hostIp = v6[1];
    rest = v6[2];
  }
  const parts = rest.split(':');
  if (!v6 && parts.length === 3) hostIp = parts.shift();
  const hostPort = parts.length === 2 ? parts[0] : undefined;
  return { hostIp, hostPort };
}

/**
 * Bind sources exist inside the project, named volumes are declared.
 * usedVolumes: named volumes mounted so far, shared across services (this call adds svc's).
 */
export function checkVolumes(svc, where, declaredVolumes, usedVolumes, { projectDir }) {
  const problems = [];
  for (const [i, v] of (Array.isArray(svc.volumes) ? svc.volumes : []).entries()) {
    const at = `${where}.volumes[${i}]`;
    let type;
    let source;
    if (isMap(v)) {
      type = v.type;
      source = v.source;
    } else {
      const s = String(v);
      const parts = s.split(':');
      if (parts.length === 1) continue; // anonymous volume
      source = parts[0];
      type = /^[./~]/.test(source) ? 'bind' : 'volume';
    }
    if (type === 'volume' && source) {
      usedVolumes.add(source);
      if (!(source in declaredVolumes)) problems.push(`${at}: named volume \`${source}\` is not declared under top-level volumes`);
    } else if (type === 'bind') {
      if (!source) {
        problems.push(`${at}: bind mount without a source`);
        continue;
      }
      if (source.startsWith('~')) {
        problems.push(`${at}: bind source ${source} is outside the repository`);
        continue;
      }
      const abs = path.resolve(projectDir, source);
      if (path.relative(projectDir, abs).startsWith('..') || path.isAbsolute(path.relative(projectDir, abs))) {
        problems.push(`${at}: bind source ${source} is outside the repository`);
      } else if (!existsSync(abs)) {
        problems.push(`${at}: bind source ${source} does not exist`);
      }
    }
  }
  return problems;
}
