import { randomBytes } from 'node:crypto';
import { redisFromConfig, redisReachable } from '@banstream/platform';
import { ensureTopicsFromConfig, kafkaFromConfig, kafkaReachable } from '@banstream/kafka';
import type { Service, ServiceDeps } from '@banstream/platform';
import { enforcerEnv, type EnforcerConfig } from './config.js';
import { createEnforcer } from './enforcer.js';
import { createHardLimiter, hardLimiterSettings } from './hard/index.js';
import { CONTEXT_SCOPES } from './context-scopes.js';
import { AnswerBatch } from './http/answer-batch.js';
import { AuthGaps } from './http/auth-gaps.js';
import { parseTrustedProxies } from './http/forwarded.js';
import { sidecarRoutes } from './http/sidecar-routes.js';
import { startCheckServer, type CheckServer } from './grpc/server.js';

export { enforcerEnv, type EnforcerConfig };

/**
 * The enforcer sidecar: the enforcer library behind HTTP (http/sidecar-routes.ts),
 * with hard limits in Redis (hard/), ready once its caches have caught up with the topics.
 */
export function createEnforcerService(deps: ServiceDeps<EnforcerConfig>): Service {
  const { config, logger, readiness, registry, http } = deps;
  const kafka = kafkaFromConfig(config, logger, 'banstream-enforcer');
  const admin = kafka.admin();
  const redis = redisFromConfig(config, logger);
  const instanceId = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const hardLimiter = createHardLimiter({ redis, logger, registry, ...hardLimiterSettings(config) });
  // `none`: an empty variable means its default, as for every variable.
  const headerName = (name: string) => (name.toLowerCase() === 'none' ? '' : name.toLowerCase());
  const headerNames = {
    clientIp: config.ENFORCER_CLIENT_IP_HEADER.toLowerCase(),
    user: headerName(config.ENFORCER_USER_HEADER),
    apiKey: headerName(config.ENFORCER_API_KEY_HEADER),
    country: headerName(config.ENFORCER_COUNTRY_HEADER),
    region: headerName(config.ENFORCER_REGION_HEADER),
    asn: headerName(config.ENFORCER_ASN_HEADER),
    route: headerName(config.ENFORCER_ROUTE_HEADER),
  };
  const gaps = new AuthGaps(new Set(CONTEXT_SCOPES.filter((scope) => headerNames[scope] !== '')), logger.child({ component: 'auth-gaps' }), registry);
  const enforcer = createEnforcer({
    kafka,
    admin,
    topicPrefix: config.TOPIC_PREFIX,
    logger,
    registry,
    instanceId,
    hardLimiter,
    warmUpMode: config.ENFORCER_WARMUP_MODE,
    warmUpWaitMs: config.ENFORCER_WARMUP_WAIT_MS,
    warmUpLocalMaxEntries: config.ENFORCER_LOCAL_LIMIT_MAX_ENTRIES,
    maxBans: config.ENFORCER_MAX_BANS,
    onContextNeed: (need) => gaps.need(need),
  });
  const trustedProxies = parseTrustedProxies(config.ENFORCER_TRUSTED_PROXIES);
  let purge: NodeJS.Timeout | undefined;
  readiness.add('caches caught up', () => enforcer.ready);
  readiness.add('kafka', kafkaReachable(admin, config.KAFKA_REQUEST_TIMEOUT_MS));
  readiness.add('redis', redisReachable(redis, 500));
  const answers = config.ENFORCER_BATCH_ANSWERS ? new AnswerBatch() : undefined;
  const callers = parseTrustedProxies(config.ENFORCER_CALLERS);
  void http.register(sidecarRoutes, { enforcer, trustedProxies, callers, headerNames, answers, extAuthzPrefix: config.ENFORCER_EXT_AUTHZ_PREFIX });
  let grpc: CheckServer | undefined;

  return {
    async start() {
      await Promise.all([admin.connect(), redis.connect()]);
      await ensureTopicsFromConfig(admin, config);
      // Scripts loaded before the first check, so it is not the one that times out.
      await hardLimiter.warmUp();
      // Before the caches are read, as the HTTP port is: early checks are decided as warm-up says.
      if (config.ENFORCER_GRPC_PORT !== 0) {
        grpc = await startCheckServer(config.HTTP_HOST, config.ENFORCER_GRPC_PORT, {
          enforcer,
          trustedProxies,
          names: headerNames,
          maxMessageBytes: config.ENFORCER_GRPC_MAX_MESSAGE_BYTES,
          deadlineMs: config.ENFORCER_GRPC_DEADLINE_MS,
          logger: logger.child({ component: 'grpc' }),
        });
        logger.info({ host: config.HTTP_HOST, port: grpc.port }, 'gRPC ext_authz listening');
      }
      await enforcer.start();
      gaps.refresh(enforcer.contextNeeds());
      purge = setInterval(() => {
        enforcer.purge();
        gaps.refresh(enforcer.contextNeeds());
      }, config.ENFORCER_PURGE_MS);
      purge.unref();
    },
    async stop() {
      clearInterval(purge);
      await grpc?.stop();
      await enforcer.stop();
      await admin.disconnect();
      redis.disconnect();
    },
  };
}
