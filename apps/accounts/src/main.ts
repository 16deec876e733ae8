import { main } from '@sluice/runtime';
import { accountsService } from './service.js';

void main(accountsService);
