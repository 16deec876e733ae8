export { webhookDispatcherService } from './service.js';
