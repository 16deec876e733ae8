export { identityService, type IdentityConfig } from './service.js';
export { composeIdentity, type IdentityGraph } from './compose.js';
