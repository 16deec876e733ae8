import { main } from '@sluice/runtime';
import { walletAuthService } from './service.js';

void main(walletAuthService);
