export { createAggregatorService, aggregatorEnv, type AggregatorConfig } from './service.js';
export { aggregatorMetrics } from './metrics.js';
