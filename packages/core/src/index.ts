export * from './errors.js';
export * from './clock.js';
