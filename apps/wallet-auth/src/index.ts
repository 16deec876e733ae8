export { walletAuthService } from './service.js';
