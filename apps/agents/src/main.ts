import { main } from '@sluice/runtime';
import { agentsService } from './service.js';

void main(agentsService);
