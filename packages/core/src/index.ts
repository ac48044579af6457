export * from './errors.js';
export * from './clock.js';
export * from './subjects/index.js';
export * from './policy/index.js';
export * from './decision/index.js';
export * from './allowlist/index.js';
export * from './window/index.js';
export * from './geo/index.js';
