export * from './envelope.js';
export * from './chunks.js';
