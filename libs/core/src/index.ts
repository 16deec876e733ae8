export * from './ids.js';
export * from './clock.js';
export * from './errors.js';
export * from './money.js';
export * from './pagination.js';
export * from './poll-loop.js';
export * from './vocabulary.js';
export * from './pix.js';
