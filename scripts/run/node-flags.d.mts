// Types for node-flags.mjs (plain JavaScript, run by `npm start` before any build).
export declare function serviceNodeFlags(service: string, root?: string): string[];
