export * from './envelope.js';
export * from './chunks.js';
export * from './compare.js';
