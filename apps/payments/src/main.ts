import { main } from '@sluice/runtime';
import { paymentsService } from './service.js';

void main(paymentsService);
