// Where the generated references read the code's own definitions: this list and
// nothing else. A module that moves (a package split, say) is fixed here; the
// reference test (reference.test.ts) fails when a variable or metric in the source
// is missing from the generated files.

/** Each declaration of environment variables: who reads it, and the module and export holding it. */
export const CONFIGURATION = [
  { reader: 'ingest', module: '@banstream/ingest', exported: 'ingestEnv' },
  { reader: 'aggregator', module: '@banstream/aggregator', exported: 'aggregatorEnv' },
  { reader: 'enforcer', module: '@banstream/enforcer', exported: 'enforcerEnv' },
  { reader: 'control', module: '@banstream/control', exported: 'controlEnv' },
  { reader: 'create-topics', module: '@banstream/kafka', exported: 'createTopicsEnv' },
  { reader: 'a worker process of a service run as workers', module: '@banstream/platform', exported: 'workerEnv' },
  { reader: 'the `banstream` CLI', module: '@banstream/cli', exported: 'cliEnv' },
];

const factory = (module, exported) => ({ module, exported });
const feeds = factory('@banstream/kafka', 'feedMetrics');
const edge = factory('@banstream/edge', 'edgeMetrics');

/** Each process's metric factories, as its code calls them on its registry. */
export const METRICS = [
  { exposedBy: 'ingest', factories: [factory('@banstream/ingest', 'ingestMetrics'), edge] },
  { exposedBy: 'aggregator', factories: [factory('@banstream/aggregator', 'aggregatorMetrics'), feeds, factory('@banstream/platform', 'supervisorMetrics')] },
  { exposedBy: 'enforcer', factories: [factory('@banstream/enforcer', 'enforcerMetrics'), factory('@banstream/enforcer', 'hardLimitMetrics'), feeds] },
  { exposedBy: 'control', factories: [factory('@banstream/control', 'controlMetrics'), feeds] },
  { exposedBy: 'an embedder of @banstream/edge', factories: [edge] },
];

/** Every service's registry: Node.js process metrics, and the `service` label. */
export const SERVICE_REGISTRY = factory('@banstream/platform', 'createMetricsRegistry');
