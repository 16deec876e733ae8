import { compliance as pb } from '@sluice/contracts';
import { invalidInput, type Environment } from '@sluice/core';
import { environmentFromPb, pageInfo, pageRequest, splitUpload, type AsyncService } from '@sluice/rpc';
import type { BeneficialOwnersService } from '../app/beneficial-owners.service.js';
import type { DocumentsService } from '../app/documents.service.js';
import type { KycLinksService } from '../app/kyc-links.service.js';
import type { VerificationsService } from '../app/verifications.service.js';
import type { VerificationStatus } from '../domain/verification.js';
import {
  documentEnumsFromPb,
  documentToPb,
  ownerToPb,
  personalInfoFromPb,
  rolesFromPb,
  verificationStatusFromPb,
  verificationToPb,
} from './mappers.js';

/** The use cases ComplianceService serves. */
export interface ComplianceUseCases {
  owners: BeneficialOwnersService;
  documents: DocumentsService;
  verifications: VerificationsService;
  kycLinks: KycLinksService;
}

function environment(e: pb.CreateBeneficialOwnerRequest['environment']): Environment {
  const env = environmentFromPb(e);
  if (!env) throw invalidInput([{ field: 'environment', message: 'must be SANDBOX or PRODUCTION' }]);
  return env;
}

/** gRPC handlers of ComplianceService: translate proto <-> app types and call the use cases. */
export function complianceHandlers(u: ComplianceUseCases): AsyncService<pb.ComplianceServiceServer> {
  return {
    async createBeneficialOwner(req) {
      const owner = await u.owners.create(req.platformId, environment(req.environment), req.customerId, {
        roles: rolesFromPb(req.roles),
        ownershipPercentage: req.ownershipPercentage,
        ...(req.personalInfo ? { personalInfo: personalInfoFromPb(req.personalInfo) } : {}),
      });
      return { beneficialOwner: ownerToPb(owner) };
    },

    async getBeneficialOwner(req) {
      return { beneficialOwner: ownerToPb(await u.owners.get(req.platformId, req.beneficialOwnerId)) };
    },

    async listBeneficialOwners(req) {
      const { limit, cursor } = pageRequest(req.page);
      const page = await u.owners.list(req.platformId, req.customerId, limit, cursor);
      return { beneficialOwners: page.data.map(ownerToPb), page: pageInfo(page) };
    },

    async updateBeneficialOwner(req) {
      const owner = await u.owners.update(
        req.platformId,
        environment(req.environment),
        req.beneficialOwnerId,
        {
          ...(req.roles ? { roles: rolesFromPb(req.roles.roles) } : {}),
          ...(req.ownershipPercentage !== undefined ? { ownershipPercentage: req.ownershipPercentage } : {}),
          ...(req.personalInfo ? { personalInfo: personalInfoFromPb(req.personalInfo) } : {}),
        },
      );
      return { beneficialOwner: ownerToPb(owner) };
    },

    async uploadDocument(requests) {
      const { header, bytes } = await splitUpload(requests);
      const enums = documentEnumsFromPb(header);
      const doc = await u.documents.upload(
        header.platformId,
        header.documentId,
        {
          ...enums,
          ...(header.documentHolder !== undefined ? { documentHolder: header.documentHolder } : {}),
          country: header.country,
          ...(header.documentNumber !== undefined ? { documentNumber: header.documentNumber } : {}),
          fileName: header.fileName,
        },
        bytes,
        header.requestKey,
      );
      return { document: documentToPb(doc) };
    },

    async getDocument(req) {
      return { document: documentToPb(await u.documents.get(req.platformId, req.documentId)) };
    },

    async listDocuments(req) {
      const { limit, cursor } = pageRequest(req.page);
      const page = await u.documents.list(req.platformId, req.documentHolder, limit, cursor);
      return { documents: page.data.map(documentToPb), page: pageInfo(page) };
    },

    async deleteDocument(req) {
      await u.documents.delete(req.platformId, req.documentId);
      return {};
    },

    async readDocumentContent(req) {
      const { document, data } = await u.documents.readChunk(req.platformId, req.documentId, req.chunkIndex);
      return { document: documentToPb(document), data };
    },

    async createVerification(req) {
      const v = await u.verifications.create(req.platformId, environment(req.environment), req.customerId);
      return { verification: verificationToPb(v) };
    },

    async getVerification(req) {
      return {
        verification: verificationToPb(await u.verifications.get(req.platformId, req.verificationId)),
      };
    },

    async listVerifications(req) {
      const { limit, cursor } = pageRequest(req.page);
      const status = verificationStatusFromPb(req.verificationStatus) as VerificationStatus | undefined;
      const page = await u.verifications.list(
        req.platformId,
        {
          ...(req.customerId !== undefined ? { customerId: req.customerId } : {}),
          ...(status ? { status } : {}),
        },
        limit,
        cursor,
      );
      return { verifications: page.data.map(verificationToPb), page: pageInfo(page) };
    },

    async createKycLink(req) {
      const link = await u.kycLinks.create(
        req.platformId,
        environment(req.environment),
        req.customerId,
        req.redirectUri,
      );
      return { kycUrl: link.kycUrl, expiresAt: link.expiresAt, provider: link.provider, token: link.token };
    },
  };
}
