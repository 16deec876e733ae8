import { Type, grpcClientConfig, sandboxConfig } from '@sluice/config';
import { defineService, masterKeyConfig, type ServiceConfig } from '@sluice/runtime';
import { migrations } from './store/migrations.js';
import { composeCompliance, type ComplianceAdapters } from './compose.js';
import { KEYRING_NAMES } from './domain/document-crypto.js';
import { rewrapCompliance } from './store/rewrap.js';

const config = Type.Object({
  ...grpcClientConfig('identity'),
  SANDBOX_TIME_SCALE: sandboxConfig.SANDBOX_TIME_SCALE,
  ...masterKeyConfig(
    KEYRING_NAMES,
    "uploaded documents and compliance's personal data (beneficial owners, document numbers and file names, screened names)",
  ),
  DOCUMENT_STORE: Type.Union([Type.Literal('postgres'), Type.Literal('s3')], {
    default: 'postgres',
    description:
      'where encrypted document chunks are kept: postgres (the compliance schema) or s3 (an S3-compatible bucket)',
  }),
  DOCUMENT_S3_BUCKET: Type.Optional(
    Type.String({ minLength: 1, description: 'bucket of DOCUMENT_STORE=s3 (required then)' }),
  ),
  DOCUMENT_S3_PREFIX: Type.String({
    default: 'documents/',
    description: 'key prefix of the document objects',
  }),
  DOCUMENT_S3_REGION: Type.String({ default: 'us-east-1', description: 'region of the bucket' }),
  DOCUMENT_S3_ENDPOINT: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'endpoint of an S3-compatible server (MinIO, Ceph, ...); unset: AWS S3',
    }),
  ),
  DOCUMENT_S3_FORCE_PATH_STYLE: Type.Boolean({
    default: false,
    description: 'path-style bucket addressing (most S3-compatible servers need it)',
  }),
  DOCUMENT_S3_ACCESS_KEY_ID: Type.Optional(
    Type.String({ minLength: 1, description: 'static S3 credentials; unset: the AWS SDK default chain' }),
  ),
  DOCUMENT_S3_SECRET_ACCESS_KEY: Type.Optional(
    Type.String({ minLength: 1, description: 'secret of DOCUMENT_S3_ACCESS_KEY_ID' }),
  ),
  DOCUMENT_UPLOAD_ABANDON_AFTER_SECONDS: Type.Integer({
    default: 3600,
    minimum: 600,
    description:
      'age after which the chunks of an upload that never became a document (cut by a crash or an outage) are deleted by the orphan sweeper of any replica; an upload writes no chunk past half of it (the gateway ends uploads within 2 minutes)',
  }),
  DOCUMENT_ORPHAN_SWEEP_MS: Type.Integer({
    default: 300_000,
    minimum: 100,
    description:
      'how often each replica looks for the chunks of abandoned uploads to delete (replicas sweep at once without getting in each other\'s way)',
  }),
  SCREENING_POLL_MS: Type.Integer({
    default: 10_000,
    minimum: 10,
    description:
      'safety poll of the screening worker: a screening given a due time wakes it on commit (LISTEN/NOTIFY, every replica) and it sleeps until the next one is due, so this only bounds how late a lost notification is noticed (without a LISTEN connection it polls every 250 ms)',
  }),
  PRODUCTION_KYC_RECHECK_MS: Type.Integer({
    default: 3_600_000,
    minimum: 1000,
    description: 'production: how often a KYC/KYB check awaiting review is asked again',
  }),
  SANDBOX_KYC_LINK_URL_TEMPLATE: Type.String({
    default: 'https://kyc.sandbox.sluice.local/onboard/{token}',
    description:
      'hosted-KYC URL pattern (a stub page, with {token}) of sandbox platforms that set no kycLinkUrlTemplate; production platforms must set their own',
  }),
  KYC_LINK_TTL_SECONDS: Type.Integer({
    default: 3600,
    minimum: 60,
    maximum: 604800,
    description: 'how long a hosted KYC link is valid',
  }),
});

/** The validated configuration of compliance. */
export type ComplianceConfig = ServiceConfig<typeof config>;

/** The compliance service with other adapters (tests: another KYC provider or document store). */
export function defineComplianceService(adapters: ComplianceAdapters = {}) {
  return defineService({
    name: 'compliance',
    schema: 'compliance',
    domain: 'compliance',
    config,
    migrations,
    compose: (deps) => composeCompliance(deps, adapters),
    commands: { rewrap: rewrapCompliance },
  });
}

/** The compliance service: beneficial owners, documents (encrypted at rest) and KYC/KYB verifications. */
export const complianceService = defineComplianceService();
