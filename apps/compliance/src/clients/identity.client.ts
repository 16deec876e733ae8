import { status } from '@grpc/grpc-js';
import { identity } from '@sluice/contracts';
import { isDomainError, type PostalAddress } from '@sluice/core';
import { createRpcClient, RpcError, type PromiseClient } from '@sluice/rpc';
import type { CustomerDirectory, PlatformDirectory } from '../app/ports.js';
import type { KycStatus } from '../domain/beneficial-owner.js';
import type { CustomerFacts } from '../domain/verification.js';

/** True when identity answered that the customer does not exist (or cannot: a malformed id). */
function isAbsent(err: unknown): boolean {
  if (isDomainError(err)) return err.kind === 'NOT_FOUND' || err.kind === 'INVALID_ARGUMENT';
  return (
    err instanceof RpcError && (err.grpcCode === status.NOT_FOUND || err.grpcCode === status.INVALID_ARGUMENT)
  );
}

const STATUS: Record<identity.VerificationStatus, KycStatus> = {
  [identity.VerificationStatus.UNSPECIFIED]: 'UNVERIFIED',
  [identity.VerificationStatus.UNVERIFIED]: 'UNVERIFIED',
  [identity.VerificationStatus.PENDING]: 'PENDING',
  [identity.VerificationStatus.APPROVED]: 'APPROVED',
  [identity.VerificationStatus.REJECTED]: 'REJECTED',
};

function address(a: identity.Address | undefined): PostalAddress | undefined {
  if (!a) return undefined;
  const out: PostalAddress = { line1: a.line1, postalCode: a.postalCode, country: a.country };
  if (a.line2 !== undefined) out.line2 = a.line2;
  if (a.city !== undefined) out.city = a.city;
  if (a.state !== undefined) out.state = a.state;
  return out;
}

/**
 * Identity over gRPC: customers over GetCustomer (platform-scoped) and platform settings over
 * GetPlatformConfig; nothing cached: either changes any time.
 */
export class IdentityClient implements CustomerDirectory, PlatformDirectory {
  private readonly client: PromiseClient<identity.IdentityServiceClient>;

  constructor(address: string) {
    this.client = createRpcClient(identity.IdentityServiceClient, address, { defaultDeadlineMs: 5000 });
  }

  async getCustomer(platformId: string, customerId: string): Promise<CustomerFacts | undefined> {
    try {
      const { customer: c } = await this.client.getCustomer({ platformId, customerId });
      if (!c || c.platformId !== platformId) return undefined;
      const business = c.customerType === identity.CustomerType.BUSINESS;
      const facts: CustomerFacts = {
        id: c.id,
        platformId: c.platformId,
        customerType: business ? 'BUSINESS' : 'INDIVIDUAL',
        deleted: c.isDeleted,
        status: STATUS[business ? c.kybStatus : c.kycStatus],
      };
      if (c.fullName) facts.fullName = c.fullName;
      if (c.birthDate) facts.birthDate = c.birthDate;
      if (c.nationality) facts.nationality = c.nationality;
      const a = address(c.address);
      if (a) facts.address = a;
      if (c.businessInfo) {
        const b = c.businessInfo;
        facts.businessInfo = {};
        if (b.legalName) facts.businessInfo.legalName = b.legalName;
        if (b.registrationNumber) facts.businessInfo.registrationNumber = b.registrationNumber;
        if (b.country) facts.businessInfo.country = b.country;
        if (b.entityType) facts.businessInfo.entityType = b.entityType;
      }
      return facts;
    } catch (err) {
      if (isAbsent(err)) return undefined;
      throw err;
    }
  }

  async kycLinkUrlTemplate(platformId: string): Promise<string | undefined> {
    const { config } = await this.client.getPlatformConfig({ platformId });
    return config?.kycLinkUrlTemplate || undefined;
  }

  close(): void {
    this.client.close();
  }
}
