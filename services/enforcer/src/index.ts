export { createEnforcerService, enforcerEnv, type EnforcerConfig } from "./service.js";
