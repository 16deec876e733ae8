import { main } from '@sluice/runtime';
import { webhookDispatcherService } from './index.js';

void main(webhookDispatcherService);
