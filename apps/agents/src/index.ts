export { agentsService } from './service.js';
