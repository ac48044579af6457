#!/usr/bin/env node
// Validates docker-compose.yml without a Docker engine.
//
//   node scripts/compose-check.mjs [--require-cli] [--file F] [--project-dir D]
//
// 1. If a Compose CLI is installed (`docker compose` v2, or `docker-compose` v1,
//    e.g. Debian's package), runs `config -q`: the CLI's own schema and
//    interpolation check. `config` only parses, so no engine is needed.
//    --require-cli (or COMPOSE_CHECK_REQUIRE_CLI=1) makes a missing CLI an error,
//    for CI machines where it is supposed to be installed.
// 2. If the `yaml` package is installed, checks what a schema cannot: references
//    between services, files the stack mounts, loopback-only ports, build args
//    against the Dockerfile, and that Prometheus scrapes the ports the services
//    listen on. Values are interpolated with their ${VAR:-default} defaults only,
//    never the caller's environment, so the result is the same on every machine.
//
// Prints every problem found, then exits 1; prints `compose-check: ok (N services)`
// and exits 0 when there are none.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REQUIRED_SERVICES = ['kafka', 'redis', 'topics-init', 'ingest', 'aggregator', 'enforcer', 'prometheus', 'grafana'];
// Long-running Node services: what each needs in its environment.
const APP_SERVICES = ['ingest', 'aggregator', 'enforcer'];
const APP_ENV = ['KAFKA_BROKERS', 'REDIS_URL', 'TOPIC_PREFIX', 'HTTP_PORT', 'HTTP_HOST', 'SERVICE_NAME'];
const TOPICS_INIT_ENV = ['KAFKA_BROKERS', 'TOPIC_PREFIX'];
const PROMETHEUS_CONFIG_IN_CONTAINER = '/etc/prometheus/prometheus.yml';
const GRAFANA_DATASOURCES_IN_CONTAINER = '/etc/grafana/provisioning/datasources';

const TOP_LEVEL_KEYS = new Set(['services', 'volumes', 'networks', 'configs', 'secrets', 'name', 'include', 'models']);
// Compose specification service keys; an unknown key is almost always a typo
// (`depend_on`, `healtcheck`) that Compose v2 would reject only at `up` time.
const SERVICE_KEYS = new Set([
  'annotations', 'attach', 'blkio_config', 'build', 'cap_add', 'cap_drop', 'cgroup', 'cgroup_parent', 'command',
  'configs', 'container_name', 'cpu_count', 'cpu_percent', 'cpu_period', 'cpu_quota', 'cpu_rt_period',
  'cpu_rt_runtime', 'cpu_shares', 'cpus', 'cpuset', 'credential_spec', 'depends_on', 'deploy', 'develop',
  'device_cgroup_rules', 'devices', 'dns', 'dns_opt', 'dns_search', 'domainname', 'driver_opts', 'entrypoint',
  'env_file', 'environment', 'expose', 'extends', 'external_links', 'extra_hosts', 'gpus', 'group_add',
  'healthcheck', 'hostname', 'image', 'init', 'ipc', 'isolation', 'labels', 'label_file', 'links', 'logging',
  'mac_address', 'mem_limit', 'mem_reservation', 'mem_swappiness', 'memswap_limit', 'models', 'network_mode',
  'networks', 'oom_kill_disable', 'oom_score_adj', 'pid', 'pids_limit', 'platform', 'ports', 'post_start',
  'pre_stop', 'privileged', 'profiles', 'provider', 'pull_policy', 'read_only', 'restart', 'runtime', 'scale',
  'secrets', 'security_opt', 'shm_size', 'stdin_open', 'stop_grace_period', 'stop_signal', 'storage_opt',
  'sysctls', 'tmpfs', 'tty', 'ulimits', 'use_api_socket', 'user', 'userns_mode', 'uts', 'volumes',
  'volumes_from', 'working_dir',
]);
const CONDITIONS = new Set(['service_started', 'service_healthy', 'service_completed_successfully']);
const DURATION = /^(\d+(\.\d+)?(us|ms|s|m|h))+$/;

// ---------------------------------------------------------------- arguments

const argv = process.argv.slice(2);
function option(name) {
  const i = argv.indexOf(name);
  if (i === -1) return undefined;
  const value = argv[i + 1];
  if (value === undefined || value.startsWith('--')) fail([`${name} needs a value`]);
  return value;
}
for (const arg of argv) {
  if (arg.startsWith('--') && !['--require-cli', '--file', '--project-dir', '--help'].includes(arg)) {
    fail([`unknown option ${arg} (known: --require-cli, --file F, --project-dir D)`]);
  }
}
if (argv.includes('--help')) {
  console.log('usage: node scripts/compose-check.mjs [--require-cli] [--file docker-compose.yml] [--project-dir DIR]');
  process.exit(0);
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const composeFile = path.resolve(option('--file') ?? path.join(repoRoot, 'docker-compose.yml'));
// Compose resolves relative paths against the project directory: the file's own
// folder unless told otherwise.
const projectDir = path.resolve(option('--project-dir') ?? path.dirname(composeFile));
const requireCli = argv.includes('--require-cli') || process.env.COMPOSE_CHECK_REQUIRE_CLI === '1';

function fail(problems) {
  console.error(`compose-check: FAILED (${problems.length} problem${problems.length === 1 ? '' : 's'})`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
function note(message) {
  console.error(`compose-check: ${message}`);
}

if (!existsSync(composeFile)) fail([`${rel(composeFile)} does not exist`]);

function rel(p) {
  const r = path.relative(projectDir, p);
  return r === '' ? '.' : r.startsWith('..') ? p : r;
}

// ---------------------------------------------------------------- 1. Compose CLI

function findCli() {
  const candidates = [
    ['docker', ['compose']],
    ['docker-compose', []],
  ];
  for (const [cmd, pre] of candidates) {
    const r = spawnSync(cmd, [...pre, 'version'], { encoding: 'utf8', timeout: 30_000 });
    if (r.status === 0) return { cmd, pre, label: [cmd, ...pre].join(' '), version: (r.stdout.split('\n')[0] ?? '').trim() };
  }
  return undefined;
}

const problems = [];
const cli = findCli();
let cliServiceCount;
if (cli) {
  const base = [...cli.pre, '--project-directory', projectDir, '-f', composeFile];
  const r = spawnSync(cli.cmd, [...base, 'config', '-q'], { encoding: 'utf8', timeout: 120_000, cwd: projectDir });
  if (r.status !== 0) {
    const output = `${r.stderr ?? ''}${r.stdout ?? ''}`.trim() || (r.error ? String(r.error) : `exit ${r.status}`);
    problems.push(`\`${cli.label} config -q\` rejected the file:\n      ${output.split('\n').join('\n      ')}`);
  } else {
    note(`\`${cli.label} config -q\` passed (${cli.version})`);
    const s = spawnSync(cli.cmd, [...base, 'config', '--services'], { encoding: 'utf8', timeout: 120_000, cwd: projectDir });
    if (s.status === 0) cliServiceCount = s.stdout.split('\n').filter((l) => l.trim() !== '').length;
  }
} else if (requireCli) {
  problems.push('no Compose CLI found (tried `docker compose` and `docker-compose`); on Debian: apt-get install -y --no-install-recommends docker-compose');
} else {
  note('no Compose CLI found (`docker compose` or `docker-compose`); skipping `config -q`');
}

// ---------------------------------------------------------------- 2. structural checks

let YAML;
try {
  YAML = (await import('yaml')).default;
} catch {
  YAML = undefined;
}

if (!YAML) {
  if (!cli) fail([...problems, 'cannot validate anything: neither the `yaml` npm package (run `npm ci`) nor a Compose CLI is installed']);
  note('the `yaml` package is not installed (run `npm ci`); skipping structural checks');
  if (problems.length > 0) fail(problems);
  console.log(`compose-check: ok (${cliServiceCount ?? '?'} services)`);
  process.exit(0);
}

/** Parses YAML with merge keys (`<<: *anchor`), as Compose does; records errors. */
function parseYaml(file, label) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    problems.push(`${label}: cannot read ${rel(file)}: ${e.message}`);
    return undefined;
  }
  const doc = YAML.parseDocument(text, { merge: true, uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    // The first error is the real one; the rest usually follow from it.
    const more = doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more)` : '';
    problems.push(`${label}: YAML error in ${rel(file)}${more}: ${doc.errors[0].message.trim()}`);
    return undefined;
  }
  return doc.toJS({ maxAliasCount: 10_000 });
}

const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// Compose interpolation: $$ is a literal $, ${VAR:-d} / ${VAR-d} take the default,
// ${VAR:?msg} / ${VAR?msg} and bare ${VAR} / $VAR need the variable set. Defaults
// only (see the header), so a variable with no default is reported.
function interpolate(value, where) {
  if (typeof value === 'string') {
    return value.replace(/\$(\$|\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (match, all, braced, bare) => {
      if (all === '$') return '$';
      const expr = braced ?? bare;
      const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?$/s.exec(expr);
      if (!m) {
        problems.push(`${where}: invalid interpolation ${match}`);
        return '';
      }
      const [, name, op, arg] = m;
      if (op === ':-' || op === '-') return interpolate(arg, where);
      if (op === ':+' || op === '+') return ''; // the variable is unset under "defaults only"
      problems.push(`${where}: \${${name}} has no default; the stack must start with no .env file (use \${${name}:-value})`);
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, `${where}[${i}]`));
  if (isMap(value)) {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = k.startsWith('x-') ? v : interpolate(v, `${where}.${k}`);
    return out;
  }
  return value;
}

const raw = parseYaml(composeFile, 'compose');
if (raw === undefined) fail(problems);
if (!isMap(raw)) fail([...problems, `${rel(composeFile)} must be a mapping with a services key`]);

const compose = {};
for (const [k, v] of Object.entries(raw)) compose[k] = k.startsWith('x-') ? v : interpolate(v, k);

if ('version' in compose) problems.push('top-level `version:` is obsolete in the Compose specification; remove it');
for (const key of Object.keys(compose)) {
  if (!key.startsWith('x-') && key !== 'version' && !TOP_LEVEL_KEYS.has(key)) problems.push(`unknown top-level key \`${key}\``);
}
const services = compose.services;
if (!isMap(services) || Object.keys(services).length === 0) fail([...problems, '`services:` is missing or empty']);
const declaredVolumes = isMap(compose.volumes) ? compose.volumes : {};
const serviceNames = new Set(Object.keys(services));
const hostNames = new Set(serviceNames);
for (const s of Object.values(services)) if (isMap(s) && typeof s.hostname === 'string') hostNames.add(s.hostname);

for (const name of REQUIRED_SERVICES) if (!serviceNames.has(name)) problems.push(`required service \`${name}\` is missing`);

/** environment: mapping or list of KEY=VALUE; returns a plain object. */
function envOf(svc, where) {
  const env = svc.environment;
  if (env === undefined || env === null) return {};
  if (Array.isArray(env)) {
    const out = {};
    for (const item of env) {
      const s = String(item);
      const i = s.indexOf('=');
      out[i === -1 ? s : s.slice(0, i)] = i === -1 ? undefined : s.slice(i + 1);
    }
    return out;
  }
  if (isMap(env)) {
    for (const [k, v] of Object.entries(env)) {
      if (v !== null && typeof v === 'object') problems.push(`${where}.environment.${k}: must be a string, number or boolean`);
    }
    return env;
  }
  problems.push(`${where}.environment: must be a mapping or a list`);
  return {};
}

function dependsOn(svc, where) {
  const d = svc.depends_on;
  if (d === undefined) return {};
  if (Array.isArray(d)) return Object.fromEntries(d.map((t) => [String(t), { condition: 'service_started' }]));
  if (isMap(d)) return d;
  problems.push(`${where}.depends_on: must be a list or a mapping`);
  return {};
}

function hasHealthcheck(svc) {
  const h = svc?.healthcheck;
  return isMap(h) && h.disable !== true && h.test !== undefined && !(Array.isArray(h.test) && h.test[0] === 'NONE');
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

const usedHostPorts = new Map();
const imagesBuilt = new Map();
const usedVolumes = new Set();

for (const [name, svc] of Object.entries(services)) {
  const where = `services.${name}`;
  if (!isMap(svc)) {
    problems.push(`${where}: must be a mapping`);
    continue;
  }
  for (const key of Object.keys(svc)) {
    if (!key.startsWith('x-') && !SERVICE_KEYS.has(key)) problems.push(`${where}: unknown key \`${key}\``);
  }

  // --- image / build
  if (svc.image === undefined && svc.build === undefined) problems.push(`${where}: needs \`image\` or \`build\``);
  if (svc.build !== undefined) {
    const build = typeof svc.build === 'string' ? { context: svc.build } : svc.build;
    if (!isMap(build)) {
      problems.push(`${where}.build: must be a path or a mapping`);
    } else {
      const context = path.resolve(projectDir, String(build.context ?? '.'));
      if (!existsSync(context) || !statSync(context).isDirectory()) {
        problems.push(`${where}.build.context: ${rel(context)} is not a directory`);
      } else {
        const dockerfile = path.resolve(context, String(build.dockerfile ?? 'Dockerfile'));
        if (!existsSync(dockerfile)) {
          problems.push(`${where}.build.dockerfile: ${rel(dockerfile)} does not exist`);
        } else {
          const declared = new Set(
            [...readFileSync(dockerfile, 'utf8').matchAll(/^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)/gim)].map((m) => m[1]),
          );
          const args = Array.isArray(build.args)
            ? Object.fromEntries(build.args.map((a) => String(a).split(/=(.*)/s).slice(0, 2)))
            : isMap(build.args) ? build.args : {};
          for (const [arg, value] of Object.entries(args)) {
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
    }
  }

  // --- depends_on
  for (const [target, spec] of Object.entries(dependsOn(svc, where))) {
    if (target === name) problems.push(`${where}.depends_on: depends on itself`);
    if (!serviceNames.has(target)) {
      problems.push(`${where}.depends_on: \`${target}\` is not a service`);
      continue;
    }
    const condition = isMap(spec) ? spec.condition ?? 'service_started' : 'service_started';
    if (!CONDITIONS.has(condition)) {
      problems.push(`${where}.depends_on.${target}.condition: \`${condition}\` is not one of ${[...CONDITIONS].join(', ')}`);
    } else if (condition === 'service_healthy' && !hasHealthcheck(services[target])) {
      problems.push(`${where}.depends_on.${target}: waits for service_healthy but \`${target}\` has no healthcheck`);
    } else if (condition === 'service_completed_successfully') {
      const restart = services[target]?.restart;
      if (restart !== undefined && restart !== 'no' && restart !== false) {
        problems.push(`${where}.depends_on.${target}: waits for completion but \`${target}\` has restart: ${restart}, so it never completes`);
      }
    }
  }

  // --- healthcheck
  if (svc.healthcheck !== undefined) {
    const h = svc.healthcheck;
    if (!isMap(h)) {
      problems.push(`${where}.healthcheck: must be a mapping`);
    } else if (h.disable !== true) {
      const t = h.test;
      const okTest =
        (typeof t === 'string' && t.trim() !== '') ||
        (Array.isArray(t) && t.length > 0 && (t[0] === 'NONE' || (['CMD', 'CMD-SHELL'].includes(t[0]) && t.length > 1)));
      if (!okTest) problems.push(`${where}.healthcheck.test: missing or malformed (a string, or a list starting with CMD, CMD-SHELL or NONE)`);
      for (const k of ['interval', 'timeout', 'start_period', 'start_interval']) {
        if (h[k] !== undefined && !DURATION.test(String(h[k]))) problems.push(`${where}.healthcheck.${k}: \`${h[k]}\` is not a duration such as 10s or 1m30s`);
      }
      if (h.retries !== undefined && !(Number.isInteger(Number(h.retries)) && Number(h.retries) > 0)) {
        problems.push(`${where}.healthcheck.retries: must be a positive integer`);
      }
    }
  }

  // --- ports: loopback only, no host port twice
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

  // --- volumes: bind sources exist inside the project, named volumes are declared
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

  // --- environment of the banstream processes
  const env = envOf(svc, where);
  const needed = APP_SERVICES.includes(name) ? APP_ENV : name === 'topics-init' ? TOPICS_INIT_ENV : [];
  for (const k of needed) {
    if (env[k] === undefined || env[k] === null || String(env[k]) === '') problems.push(`${where}.environment: ${k} is not set`);
  }
  if (APP_SERVICES.includes(name) && env.HTTP_HOST !== undefined && env.HTTP_HOST !== '0.0.0.0') {
    problems.push(`${where}.environment.HTTP_HOST: must be 0.0.0.0 in a container, or nothing outside it can reach the ops server`);
  }
  if (env.KAFKA_BROKERS) {
    for (const hp of String(env.KAFKA_BROKERS).split(',')) {
      const host = hp.trim().replace(/:\d+$/, '');
      if (!hostNames.has(host)) problems.push(`${where}.environment.KAFKA_BROKERS: \`${hp}\` is not a service of this file`);
    }
  }
  if (env.REDIS_URL) {
    let host;
    try {
      host = new URL(String(env.REDIS_URL)).hostname;
    } catch {
      problems.push(`${where}.environment.REDIS_URL: \`${env.REDIS_URL}\` is not a URL`);
    }
    if (host !== undefined && !hostNames.has(host)) problems.push(`${where}.environment.REDIS_URL: host \`${host}\` is not a service of this file`);
  }
}

// --- dependency cycles (Compose refuses to start them)
{
  const state = new Map();
  const visit = (n, trail) => {
    if (state.get(n) === 'done') return;
    if (state.get(n) === 'active') {
      problems.push(`depends_on cycle: ${[...trail.slice(trail.indexOf(n)), n].join(' -> ')}`);
      return;
    }
    state.set(n, 'active');
    for (const t of Object.keys(isMap(services[n]) ? dependsOn(services[n], `services.${n}`) : {})) {
      if (serviceNames.has(t)) visit(t, [...trail, n]);
    }
    state.set(n, 'done');
  };
  for (const n of serviceNames) visit(n, []);
}

for (const v of Object.keys(declaredVolumes)) {
  if (!usedVolumes.has(v)) note(`warning: top-level volume \`${v}\` is not used by any service`);
}

// --- mounted configuration: Prometheus scrapes what the services serve, Grafana
// points at a service of this file.
function bindSourceFor(svc, containerPath) {
  for (const v of Array.isArray(svc?.volumes) ? svc.volumes : []) {
    const [source, target] = isMap(v) ? [v.source, v.target] : String(v).split(':');
    if (target === containerPath && source) return path.resolve(projectDir, source);
  }
  return undefined;
}

const promFile = bindSourceFor(services.prometheus, PROMETHEUS_CONFIG_IN_CONTAINER);
if (serviceNames.has('prometheus') && !promFile) {
  problems.push(`services.prometheus: no bind mount to ${PROMETHEUS_CONFIG_IN_CONTAINER}, so it would scrape nothing of ours`);
} else if (promFile && existsSync(promFile)) {
  const prom = parseYaml(promFile, 'prometheus');
  if (prom !== undefined) {
    const targets = new Set();
    for (const job of Array.isArray(prom?.scrape_configs) ? prom.scrape_configs : []) {
      for (const sc of Array.isArray(job?.static_configs) ? job.static_configs : []) {
        for (const t of Array.isArray(sc?.targets) ? sc.targets : []) targets.add(String(t));
      }
    }
    if (targets.size === 0) problems.push(`${rel(promFile)}: no static scrape targets`);
    for (const t of targets) {
      const host = t.replace(/:\d+$/, '');
      if (!hostNames.has(host) && !['127.0.0.1', 'localhost'].includes(host)) {
        problems.push(`${rel(promFile)}: target \`${t}\` is not a service of the compose file`);
      }
    }
    for (const name of APP_SERVICES) {
      const port = isMap(services[name]) ? envOf(services[name], `services.${name}`).HTTP_PORT : undefined;
      if (port !== undefined && !targets.has(`${name}:${port}`)) {
        problems.push(`${rel(promFile)}: does not scrape ${name}:${port} (services.${name} listens on HTTP_PORT ${port})`);
      }
    }
  }
}

const dsDir = bindSourceFor(services.grafana, GRAFANA_DATASOURCES_IN_CONTAINER);
if (dsDir && existsSync(dsDir)) {
  const files = statSync(dsDir).isDirectory()
    ? readdirSync(dsDir).filter((f) => /\.ya?ml$/.test(f)).map((f) => path.join(dsDir, f))
    : [dsDir];
  if (files.length === 0) problems.push(`${rel(dsDir)}: no datasource files`);
  for (const f of files) {
    const ds = parseYaml(f, 'grafana');
    for (const d of Array.isArray(ds?.datasources) ? ds.datasources : []) {
      let host;
      try {
        host = new URL(String(d.url)).hostname;
      } catch {
        problems.push(`${rel(f)}: datasource \`${d.name}\` has no valid url`);
        continue;
      }
      if (!hostNames.has(host)) problems.push(`${rel(f)}: datasource \`${d.name}\` points at \`${host}\`, not a service of the compose file`);
    }
  }
}

if (problems.length > 0) fail(problems);
console.log(`compose-check: ok (${serviceNames.size} services)`);
