/** The caller type lives with the authentication hook that resolves it (src/http/caller.ts), below src/access. */
export type { Caller } from '../http/caller.js';
