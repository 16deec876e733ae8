/**
 * The public API model: one schema and one mapper per public resource (REST
 * responses and webhook payloads alike, feeding the OpenAPI document), and the
 * catalogue of events between services (one typed contract per event type).
 */
export * from './schema.js';
export * from './resources/transaction.js';
export * from './resources/internal-account.js';
export * from './resources/quote.js';
export * from './resources/external-account.js';
export * from './resources/customer.js';
export * from './resources/auth-method.js';
export * from './resources/agent.js';
export * from './events/catalogue.js';
export * from './resources/webhook-delivery.js';
export * from './events/webhooks-openapi.js';
export * from './resources/beneficial-owner.js';
export * from './resources/document.js';
export * from './resources/verification.js';
export * from './resources/invitation.js';
export * from './resources/bulk-import.js';
