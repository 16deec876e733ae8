export { complianceService } from './service.js';
