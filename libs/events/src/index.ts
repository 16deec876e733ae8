export * from './envelope.js';
export * from './nats.js';
export * from './outbox.js';
export * from './consumer.js';
export * from './contract-check.js';
export * from './notifications.js';
export * from './notified-loop.js';
export * from './fanout.js';
