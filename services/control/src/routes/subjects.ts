/**
 * canonicalSubject lives in @banstream/core beside compileKey, so the subject the
 * control API writes and the one the enforcer looks up are one text; re-exported here
 * for the routes that import it from this file.
 */
export { canonicalSubject } from '@banstream/core';
