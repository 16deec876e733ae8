export * from './envelope.js';
export * from './chunks.js';
export * from './compare.js';
export * from './sealed-value.js';
