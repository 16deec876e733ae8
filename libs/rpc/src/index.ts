export * from './errors.js';
export * from './server.js';
export * from './client.js';
export * from './lifecycle.js';
export * from './deadline.js';
export * from './paging.js';
export * from './environment.js';
export * from './upload.js';
