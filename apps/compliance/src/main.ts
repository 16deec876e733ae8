import { main } from '@sluice/runtime';
import { complianceService } from './service.js';

void main(complianceService);
