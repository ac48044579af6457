// What this repository's stack must contain: the services, and what each
// banstream process needs in its environment to find Kafka, Redis and its port.

const REQUIRED_SERVICES = ['kafka', 'redis', 'topics-init', 'ingest', 'aggregator', 'enforcer', 'control', 'prometheus', 'grafana'];
// Long-running Node services: what each needs in its environment.
export const APP_SERVICES = ['ingest', 'aggregator', 'enforcer', 'control'];
const APP_ENV = ['KAFKA_BROKERS', 'REDIS_URL', 'TOPIC_PREFIX', 'HTTP_PORT', 'HTTP_HOST', 'SERVICE_NAME'];
const TOPICS_INIT_ENV = ['KAFKA_BROKERS', 'TOPIC_PREFIX'];

export function checkRequiredServices(serviceNames) {
  return REQUIRED_SERVICES.filter((name) => !serviceNames.has(name)).map((name) => `required service \`${name}\` is missing`);
}

/** env: the service's environment as read by environmentOf; hostNames: what containers of this file can resolve. */
export function checkEnvironment(name, env, where, hostNames) {
  const problems = [];
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
  return problems;
}
