/** Round keys are part of the protocol (the council checks them): see src/protocol/round-key.ts. */
export { councilKeyOf, normalizeUrl, parseRoundKey, roundKey } from '../../protocol/round-key.js';
