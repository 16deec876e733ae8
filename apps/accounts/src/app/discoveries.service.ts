import type { Environment } from '@sluice/core';
import { filterDiscoveries, type DiscoveriesRequest, type Discovery } from '../domain/discoveries.js';

/**
 * GET /discoveries: the receiving institutions of the platform's environment (the sandbox's fixed
 * directory, domain/discoveries.ts; production has no institution directory configured yet and
 * lists none), filtered by country and currency.
 */
export class DiscoveriesService {
  constructor(private readonly directories: Record<Environment, readonly Discovery[]>) {}

  list(req: DiscoveriesRequest): Discovery[] {
    return filterDiscoveries(this.directories[req.environment], req);
  }
}
