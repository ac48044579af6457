export { createIngestService, ingestEnv, type IngestConfig } from "./service.js";
