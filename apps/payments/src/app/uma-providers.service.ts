import { type Page, type Environment } from '@sluice/core';
import { pageUmaProviders, type UmaProvider, type UmaProvidersQuery } from '../domain/uma-providers.js';
import type { UmaProviderDirectory } from './ports.js';

/** GET /uma-providers: the UMA institutions payments can reach, filtered and paged. */
export class UmaProvidersService {
  constructor(private readonly directories: Record<Environment, UmaProviderDirectory>) {}

  async list(q: UmaProvidersQuery): Promise<Page<UmaProvider>> {
    const { platformId, environment, ...filter } = q;
    return pageUmaProviders(await this.directories[environment].providers(platformId), filter);
  }
}
