export * from './errors.js';
export * from './client-public-key.js';
export { HPKE_INFO } from './hpke.js';
export * from './session-bundle.js';
export * from './stamp.js';
export * from './export-bundle.js';
export * from './key-custody.js';
export * from './signing-payload.js';
