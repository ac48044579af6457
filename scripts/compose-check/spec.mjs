// The keys the Compose specification allows, at the top level and in a service.
// `x-` extension fields are allowed anywhere.

const TOP_LEVEL_KEYS = new Set(['services', 'volumes', 'networks', 'configs', 'secrets', 'name', 'include', 'models']);
// Compose specification service keys; an unknown key is almost always a typo
// (`depend_on`, `healtcheck`) that Compose v2 would reject only at `up` time.
const SERVICE_KEYS = new Set([
  'annotations',
  'attach',
  'blkio_config',
  'build',
  'cap_add',
  'cap_drop',
  'cgroup',
  'cgroup_parent',
  'command',
  'configs',
  'container_name',
  'cpu_count',
  'cpu_percent',
  'cpu_period',
  'cpu_quota',
  'cpu_rt_period',
  'cpu_rt_runtime',
  'cpu_shares',
  'cpus',
  'cpuset',
  'credential_spec',
  'depends_on',
  'deploy',
  'develop',
  'device_cgroup_rules',
  'devices',
  'dns',
  'dns_opt',
  'dns_search',
  'domainname',
  'driver_opts',
  'entrypoint',
  'env_file',
  'environment',
  'expose',
  'extends',
  'external_links',
  'extra_hosts',
  'gpus',
  'group_add',
  'healthcheck',
  'hostname',
  'image',
  'init',
  'ipc',
  'isolation',
  'labels',
  'label_file',
  'links',
  'logging',
  'mac_address',
  'mem_limit',
  'mem_reservation',
  'mem_swappiness',
  'memswap_limit',
  'models',
  'network_mode',
  'networks',
  'oom_kill_disable',
  'oom_score_adj',
  'pid',
  'pids_limit',
  'platform',
  'ports',
  'post_start',
  'pre_stop',
  'privileged',
  'profiles',
  'provider',
  'pull_policy',
  'read_only',
  'restart',
  'runtime',
  'scale',
  'secrets',
  'security_opt',
  'shm_size',
  'stdin_open',
  'stop_grace_period',
  'stop_signal',
  'storage_opt',
  'sysctls',
  'tmpfs',
  'tty',
  'ulimits',
  'use_api_socket',
  'user',
  'userns_mode',
  'uts',
  'volumes',
  'volumes_from',
  'working_dir',
]);

export function checkTopLevelKeys(compose) {
  const problems = [];
  if ('version' in compose) problems.push('top-level `version:` is obsolete in the Compose specification; remove it');
  for (const key of Object.keys(compose)) {
    if (!key.startsWith('x-') && key !== 'version' && !TOP_LEVEL_KEYS.has(key)) problems.push(`unknown top-level key \`${key}\``);
  }
  return problems;
}

export function checkServiceKeys(svc, where) {
  const problems = [];
  for (const key of Object.keys(svc)) {
    if (!key.startsWith('x-') && !SERVICE_KEYS.has(key)) problems.push(`${where}: unknown key \`${key}\``);
  }
  return problems;
}
