/** The world a platform lives in: sandbox platforms see the simulated world, production ones the real one. */
export type Environment = 'SANDBOX' | 'PRODUCTION';
