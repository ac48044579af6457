// Types for control-token.mjs (plain JavaScript, run by `npm start` before any build).
export declare function localControlToken(stackDir: string): { tokenFile: string; tokensFile: string };
