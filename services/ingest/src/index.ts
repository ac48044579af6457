export { createIngestService, ingestEnv, type IngestConfig } from './service.js';
export { ingestMetrics } from './metrics.js';
