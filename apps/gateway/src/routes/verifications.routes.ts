import { compliance } from '@sluice/contracts';
import { Verification, verificationJson } from '@sluice/api';
import { environmentOf, optionalBody } from '../http/request.helpers.js';
import type { RouteModule } from '../http/types.js';
import { envelope, errorResponses, pageOf } from '../schemas/common.js';
import {
  KycLinkCreateRequest,
  KycLinkResponse,
  VerificationList,
  VerificationListQuery,
  VerificationParams,
  VerificationRequest,
} from '../schemas/compliance.schemas.js';
import { CustomerParams } from '../schemas/customer.schemas.js';

const TAGS = ['KYC/KYB Verifications'];
const errors = errorResponses();

/**
 * KYC/KYB verifications (compliance service): `POST /verifications`, `GET /verifications`,
 * `GET /verifications/{id}`, and `POST /customers/{customerId}/kyc-link`. The customer's
 * kycStatus/kybStatus follow the verification (identity applies them by event).
 */
const verificationsRoutes: RouteModule = (app, { clients }) => {
  app.post(
    '/verifications',
    {
      schema: {
        tags: TAGS,
        operationId: 'createVerification',
        summary: 'Submit a customer for verification',
        description:
          'Starts KYB (business) or KYC (individual). When information is missing the verification is RESOLVE_ERRORS and `errors` lists it (missing customer fields, documents by category with acceptedDocumentTypes, beneficial owners, an owner’s identity document or rejected KYC); call again after resolving: the same verification is re-evaluated. Once complete it is IN_PROGRESS (the customer’s status becomes PENDING) and is decided asynchronously. A verification under way is answered as it is. Sandbox: a business by the last 3 digits of businessInfo.registrationNumber, an individual by the last 3 characters of fullName (001 PENDING_MANUAL_REVIEW, customer PENDING; 002 REJECTED; anything else APPROVED), about 1 s × SANDBOX_TIME_SCALE later. Webhooks VERIFICATION.* and CUSTOMER.KYC_*/KYB_*.',
        body: VerificationRequest,
        response: { 200: Verification, ...errors },
      },
    },
    async (request) => {
      const { verification } = await clients.compliance.createVerification({
        platformId: request.platform.id,
        environment: environmentOf(request),
        customerId: request.body.customerId,
      });
      return verificationJson(verification!);
    },
  );

  app.get(
    '/verifications',
    {
      schema: {
        tags: TAGS,
        operationId: 'listVerifications',
        summary: 'List verifications',
        description:
          'Verifications of the platform, newest first, optionally of one customer or in one status.',
        querystring: VerificationListQuery,
        response: { 200: VerificationList, ...errors },
      },
    },
    async (request) => {
      const q = request.query;
      const r = await clients.compliance.listVerifications({
        platformId: request.platform.id,
        customerId: q.customerId,
        verificationStatus: q.verificationStatus
          ? (`VERIFICATION_STATUS_${q.verificationStatus}` as compliance.VerificationStatus)
          : compliance.VerificationStatus.UNSPECIFIED,
        page: pageOf(q),
      });
      return envelope(r.verifications.map(verificationJson), r.page);
    },
  );

  app.get(
    '/verifications/:verificationId',
    {
      schema: {
        tags: TAGS,
        operationId: 'getVerification',
        summary: 'Get a verification',
        params: VerificationParams,
        response: { 200: Verification, ...errors },
      },
    },
    async (request) => {
      const { verification } = await clients.compliance.getVerification({
        platformId: request.platform.id,
        verificationId: request.params.verificationId,
      });
      return verificationJson(verification!);
    },
  );

  app.post(
    '/customers/:customerId/kyc-link',
    {
      preValidation: optionalBody, // reference: the body is `required: false`
      schema: {
        tags: TAGS,
        operationId: 'createCustomerKycLink',
        summary: 'Generate a hosted KYC link for an existing customer',
        description:
          'A fresh single-use link (and token) per call, valid for KYC_LINK_TTL_SECONDS (default 1 hour), built from the URL pattern the platform configures (kycLinkUrlTemplate of PATCH /config; a sandbox platform without one gets the deployment’s stub page). The customer’s kycStatus does not change. A production platform without kycLinkUrlTemplate: 400 KYC_LINK_NOT_CONFIGURED.',
        params: CustomerParams,
        body: KycLinkCreateRequest,
        response: { 201: KycLinkResponse, ...errors },
      },
    },
    async (request, reply) => {
      const r = await clients.compliance.createKycLink({
        platformId: request.platform.id,
        environment: environmentOf(request),
        customerId: request.params.customerId,
        redirectUri: request.body?.redirectUri,
      });
      return reply.code(201).send({
        kycUrl: r.kycUrl,
        expiresAt: r.expiresAt!.toISOString(),
        provider: 'SUMSUB' as const,
        ...(r.token ? { token: r.token } : {}),
      });
    },
  );
};

export default verificationsRoutes;
