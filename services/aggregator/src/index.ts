export { createAggregatorService, aggregatorEnv, type AggregatorConfig } from "./service.js";
