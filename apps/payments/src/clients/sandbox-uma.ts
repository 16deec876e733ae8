import type { UmaCounterparty, UmaProviderDirectory } from '../app/ports.js';
import { fail } from '../domain/errors.js';
import { sandboxReceiverProfile, type ReceiverProfile, type UmaAddress } from '../domain/uma.js';
import { sandboxUmaProviders, type UmaProvider } from '../domain/uma-providers.js';

// The UMA world of sandbox platforms, simulated in process: the specification's sandbox receivers
// and a fixed provider directory. Production platforms get no counterparty (an outage) and an
// empty directory until a UMA client and registry are configured behind the same ports.

/** The sandbox counterparty: the specification's receivers at the sandbox UMA domain; every other address is unknown. */
export class SandboxUmaCounterparty implements UmaCounterparty {
  constructor(private readonly sandboxDomain: string) {}

  async lookupReceiver(address: UmaAddress): Promise<ReceiverProfile | undefined> {
    return sandboxReceiverProfile(address, this.sandboxDomain);
  }
}

/** Production placeholder until a UMA client is configured: every lookup is a counterparty outage. */
export class UnconfiguredUmaCounterparty implements UmaCounterparty {
  async lookupReceiver(): Promise<ReceiverProfile | undefined> {
    throw fail('UMA_COUNTERPARTY_UNAVAILABLE', 'UMA payments to other institutions are not enabled on this deployment');
  }
}

/** The sandbox provider directory (domain/uma-providers.ts sandboxUmaProviders). */
export class SandboxUmaProviderDirectory implements UmaProviderDirectory {
  constructor(private readonly sandboxDomain: string) {}

  async providers(): Promise<UmaProvider[]> {
    return sandboxUmaProviders(this.sandboxDomain);
  }
}

/** Production has no UMA registry configured yet: the directory is empty. */
export class EmptyUmaProviderDirectory implements UmaProviderDirectory {
  async providers(): Promise<UmaProvider[]> {
    return [];
  }
}
