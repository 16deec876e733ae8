import { main } from '@sluice/runtime';
import { identityService } from './service.js';

void main(identityService);
