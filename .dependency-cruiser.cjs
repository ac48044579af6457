/**
 * Dependency boundaries (issue 26): services import no other service, kafkajs only in
 * the Kafka port, the CLI free of services and servers, packages below services, core
 * without I/O, no cycles. `npm run boundaries`; reasons in docs/decisions/lint-and-boundaries.md.
 *
 * Workspace imports (`@banstream/x`, `@banstream/x/sub`) resolve to the package's sources
 * (scripts/boundaries/workspace-resolve.cjs), so the check needs no build.
 */
const SERVICES = '(aggregator|control|enforcer|ingest)';
const KAFKAJS = '(^|/)node_modules/kafkajs/|^kafkajs(/|$)';
const IO_LIBRARIES = '(^|/)node_modules/(kafkajs|ioredis|fastify|@fastify/[^/]+|pino|pino-[^/]+|prom-client)/|^(kafkajs|ioredis|fastify|@fastify/[^/]+|pino|prom-client)(/|$)';
const IO_CORE_MODULES = '^(node:)?(fs|fs/promises|net|http|https|http2|tls|dgram|dns|child_process|cluster)$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-service-to-service',
      comment: 'A service imports no other service: what two services share belongs in a package.',
      severity: 'error',
      from: { path: `^services/${SERVICES}/` },
      to: { path: [`^services/${SERVICES}/`, `^@banstream/${SERVICES}(/|$)`], pathNot: ['^services/$1/', '^@banstream/$1(/|$)'] },
    },
    {
      name: 'kafkajs-only-in-port',
      comment: 'Only packages/kafka (the Kafka port) imports kafkajs, types included, so the client can be changed in one place.',
      severity: 'error',
      from: { pathNot: '^packages/kafka/' },
      to: { path: KAFKAJS },
    },
    {
      name: 'cli-no-service',
      comment: 'The CLI talks to the control API over HTTP: it depends on no service, no server framework, no Kafka client.',
      severity: 'error',
      from: { path: '^packages/cli/' },
      to: { path: ['^services/', `^@banstream/${SERVICES}(/|$)`, '(^|/)node_modules/(fastify|@fastify/[^/]+)/|^(fastify|@fastify/[^/]+)(/|$)', KAFKAJS] },
    },
    {
      name: 'packages-no-service',
      comment: 'Packages sit below services: a package never imports a service.',
      severity: 'error',
      from: { path: '^(packages|schemas)/' },
      to: { path: ['^services/', `^@banstream/${SERVICES}(/|$)`] },
    },
    {
      name: 'core-no-io',
      comment: 'core is pure domain logic: no Kafka, Redis, HTTP server, logger, metrics, file system or network.',
      severity: 'error',
      // Tests may use node:net and the like as an oracle for the pure code.
      from: { path: '^packages/core/', pathNot: '\\.test\\.ts$' },
      to: { path: [IO_LIBRARIES, IO_CORE_MODULES] },
    },
    {
      name: 'engine-pure',
      comment: 'The counting engine is pure like core (the backtest runs it on a laptop): no I/O library, no platform, no Kafka port.',
      severity: 'error',
      from: { path: '^packages/engine/', pathNot: '\\.test\\.ts$' },
      to: { path: [IO_LIBRARIES, IO_CORE_MODULES, '^packages/(platform|kafka)/', '^@banstream/(platform|kafka)(/|$)'] },
    },
    {
      name: 'forward-flow',
      comment: "A service's service.ts builds it and main.ts starts it: no other file of the service imports them, so its paths go forward and never come back through the composition root.",
      severity: 'error',
      from: { path: '^services/([^/]+)/src/', pathNot: ['^services/[^/]+/src/(main|index|service)\\.ts$', '\\.test\\.ts$'] },
      to: { path: '^services/$1/src/(service|main)\\.ts$' },
    },
    {
      name: 'ingest-events-before-http',
      comment: "The gateway's events/ (decode, check, normalise) knows nothing of HTTP: http/ calls events/, never the other way.",
      severity: 'error',
      from: { path: '^services/ingest/src/events/' },
      to: { path: '^services/ingest/src/http/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles inside a package (type-only imports included: a cycle of types is still a knot).',
      severity: 'error',
      from: { path: '^(schemas|packages/[^/]+|services/[^/]+)/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import the check cannot resolve is one it cannot judge.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    exclude: { path: '(^|/)dist/' },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    webpackConfig: { fileName: 'scripts/boundaries/workspace-resolve.cjs' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.d.ts', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
