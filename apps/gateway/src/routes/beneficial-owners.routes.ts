import { compliance } from '@sluice/contracts';
import {
  BeneficialOwner,
  BeneficialOwnerCreateRequest,
  BeneficialOwnerUpdateRequest,
  beneficialOwnerJson,
} from '@sluice/api';
import type { Static } from '@sinclair/typebox';
import { environmentOf } from '../http/request.helpers.js';
import type { RouteModule } from '../http/types.js';
import { envelope, errorResponses, pageOf } from '../schemas/common.js';
import {
  BeneficialOwnerList,
  BeneficialOwnerListQuery,
  BeneficialOwnerParams,
} from '../schemas/compliance.schemas.js';

const TAGS = ['KYC/KYB Verifications'];
const errors = errorResponses();

type PersonalInfoInput = Partial<Static<typeof BeneficialOwnerCreateRequest>['personalInfo']>;

/** The proto PersonalInfo of a request's (possibly partial) personalInfo. */
function personalInfoPb(p: PersonalInfoInput): compliance.PersonalInfo {
  const { idType, ...rest } = p;
  return {
    ...rest,
    idType: idType
      ? (`IDENTIFICATION_TYPE_${idType}` as compliance.IdentificationType)
      : compliance.IdentificationType.UNSPECIFIED,
  };
}

const rolesPb = (roles: string[]) =>
  roles.map((r) => `BENEFICIAL_OWNER_ROLE_${r}` as compliance.BeneficialOwnerRole);

/**
 * Beneficial owners of business customers (compliance service): `POST /beneficial-owners`,
 * `GET /beneficial-owners?customerId=`, `GET/PATCH /beneficial-owners/{id}`. KYC runs by itself
 * after creation and after a change of personal data (kycStatus PENDING, then the outcome).
 */
const beneficialOwnersRoutes: RouteModule = (app, { clients }) => {
  app.post(
    '/beneficial-owners',
    {
      schema: {
        tags: TAGS,
        operationId: 'createBeneficialOwner',
        summary: 'Create a beneficial owner',
        description:
          'Adds a beneficial owner, director or officer to a BUSINESS customer of the platform (another customer type: 400 on customerId; an unknown customer: 404). The UBOs of a business own at most 100% together; a UBO owns more than 0%. KYC starts at once: kycStatus is PENDING and moves asynchronously. Sandbox: the last 3 characters of personalInfo.lastName decide (001 stays PENDING, 002 REJECTED, anything else APPROVED), about 1 s × SANDBOX_TIME_SCALE later.',
        body: BeneficialOwnerCreateRequest,
        response: { 201: BeneficialOwner, ...errors },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const { beneficialOwner } = await clients.compliance.createBeneficialOwner({
        platformId: request.platform.id,
        environment: environmentOf(request),
        customerId: b.customerId,
        roles: rolesPb(b.roles),
        ownershipPercentage: b.ownershipPercentage,
        personalInfo: personalInfoPb(b.personalInfo),
      });
      return reply.code(201).send(beneficialOwnerJson(beneficialOwner!));
    },
  );

  app.get(
    '/beneficial-owners',
    {
      schema: {
        tags: TAGS,
        operationId: 'listBeneficialOwners',
        summary: 'List beneficial owners',
        description: 'The beneficial owners of one business customer, oldest first.',
        querystring: BeneficialOwnerListQuery,
        response: { 200: BeneficialOwnerList, ...errors },
      },
    },
    async (request) => {
      const q = request.query;
      const r = await clients.compliance.listBeneficialOwners({
        platformId: request.platform.id,
        customerId: q.customerId,
        page: pageOf(q),
      });
      return envelope(r.beneficialOwners.map(beneficialOwnerJson), r.page);
    },
  );

  app.get(
    '/beneficial-owners/:beneficialOwnerId',
    {
      schema: {
        tags: TAGS,
        operationId: 'getBeneficialOwner',
        summary: 'Get a beneficial owner',
        params: BeneficialOwnerParams,
        response: { 200: BeneficialOwner, ...errors },
      },
    },
    async (request) => {
      const { beneficialOwner } = await clients.compliance.getBeneficialOwner({
        platformId: request.platform.id,
        beneficialOwnerId: request.params.beneficialOwnerId,
      });
      return beneficialOwnerJson(beneficialOwner!);
    },
  );

  app.patch(
    '/beneficial-owners/:beneficialOwnerId',
    {
      schema: {
        tags: TAGS,
        operationId: 'updateBeneficialOwner',
        summary: 'Update a beneficial owner',
        description:
          'Changes the fields given (roles are replaced; personalInfo fields are merged, its address replaced). A change of personal data runs KYC again (kycStatus PENDING, then the outcome).',
        params: BeneficialOwnerParams,
        body: BeneficialOwnerUpdateRequest,
        response: { 200: BeneficialOwner, ...errors },
      },
    },
    async (request) => {
      const b = request.body;
      const { beneficialOwner } = await clients.compliance.updateBeneficialOwner({
        platformId: request.platform.id,
        environment: environmentOf(request),
        beneficialOwnerId: request.params.beneficialOwnerId,
        ...(b.roles ? { roles: { roles: rolesPb(b.roles) } } : {}),
        ...(b.ownershipPercentage !== undefined ? { ownershipPercentage: b.ownershipPercentage } : {}),
        ...(b.personalInfo ? { personalInfo: personalInfoPb(b.personalInfo) } : {}),
      });
      return beneficialOwnerJson(beneficialOwner!);
    },
  );
};

export default beneficialOwnersRoutes;
