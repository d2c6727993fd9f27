/** The norm check is part of the protocol: a forge applies the same bound to what the council sends back. */
export { normBound, SERVER_LR_MAX } from '../protocol/norm-bound.js';
