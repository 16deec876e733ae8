import { implement } from '@sluice/rpc';
import { compliance } from '@sluice/contracts';
import { keyringFromConfig, type Composition, type ServiceDeps } from '@sluice/runtime';
import type { ComplianceConfig } from './service.js';
import type { CustomerDirectory, DocumentStore, KycProvider, PlatformDirectory } from './app/ports.js';
import { BeneficialOwnersService } from './app/beneficial-owners.service.js';
import { DocumentsService } from './app/documents.service.js';
import { VerificationsService } from './app/verifications.service.js';
import { KycLinksService } from './app/kyc-links.service.js';
import { ScreeningWorker } from './app/screening.worker.js';
import { OrphanChunkSweeper } from './app/orphan-chunks.sweeper.js';
import { IdentityClient } from './clients/identity.client.js';
import { ProductionKycProvider, SandboxKycProvider } from './clients/kyc-providers.js';
import { KEYRING_NAMES } from './domain/document-crypto.js';
import { CompliancePublisher } from './events/compliance.events.js';
import { IdentityConsumer } from './events/identity.consumer.js';
import { complianceHandlers } from './rpc/compliance.rpc.js';
import { BeneficialOwnerRepository } from './store/beneficial-owner.repository.js';
import { DocumentRepository } from './store/document.repository.js';
import { KycLinkRepository } from './store/kyc-link.repository.js';
import { PostgresDocumentStore } from './store/postgres-document.store.js';
import { S3DocumentStore } from './store/s3-document.store.js';
import { UnreferencedBlobRepository } from './store/unreferenced-blob.repository.js';
import { VerificationRepository } from './store/verification.repository.js';

/** Adapters a test may replace (default: identity over gRPC, the configured document store). */
export interface ComplianceAdapters {
  customers?: CustomerDirectory;
  platforms?: PlatformDirectory;
  /** The document store made of the one DOCUMENT_STORE configures (a test wraps it to inject faults). */
  documentStore?: (configured: DocumentStore & { close?(): void }) => DocumentStore & { close?(): void };
  sandboxKyc?: KycProvider;
}

/** The object graph of a running compliance service. */
export interface ComplianceGraph extends Composition {
  owners: BeneficialOwnersService;
  documents: DocumentsService;
  verifications: VerificationsService;
  kycLinks: KycLinksService;
  screening: ScreeningWorker;
  orphanChunks: OrphanChunkSweeper;
  documentStore: DocumentStore;
}

/** The document store DOCUMENT_STORE selects. */
function documentStoreOf(
  c: ComplianceConfig,
  deps: ServiceDeps<ComplianceConfig>,
): DocumentStore & { close?(): void } {
  if (c.DOCUMENT_STORE === 'postgres') return new PostgresDocumentStore(deps.orm);
  if (!c.DOCUMENT_S3_BUCKET) throw new Error('DOCUMENT_S3_BUCKET is required when DOCUMENT_STORE=s3');
  if (!c.DOCUMENT_S3_ACCESS_KEY_ID !== !c.DOCUMENT_S3_SECRET_ACCESS_KEY)
    throw new Error('DOCUMENT_S3_ACCESS_KEY_ID and DOCUMENT_S3_SECRET_ACCESS_KEY are set together');
  return new S3DocumentStore({
    bucket: c.DOCUMENT_S3_BUCKET,
    prefix: c.DOCUMENT_S3_PREFIX,
    region: c.DOCUMENT_S3_REGION,
    forcePathStyle: c.DOCUMENT_S3_FORCE_PATH_STYLE,
    ...(c.DOCUMENT_S3_ENDPOINT ? { endpoint: c.DOCUMENT_S3_ENDPOINT } : {}),
    ...(c.DOCUMENT_S3_ACCESS_KEY_ID && c.DOCUMENT_S3_SECRET_ACCESS_KEY
      ? {
          credentials: {
            accessKeyId: c.DOCUMENT_S3_ACCESS_KEY_ID,
            secretAccessKey: c.DOCUMENT_S3_SECRET_ACCESS_KEY,
          },
        }
      : {}),
  });
}

/** The composition root of compliance: every object of the service, built once. */
export function composeCompliance(
  deps: ServiceDeps<ComplianceConfig>,
  adapters: ComplianceAdapters = {},
): ComplianceGraph {
  const { orm, clock, outbox, bus, logger, metrics, config: c } = deps;
  const keyring = keyringFromConfig(c, KEYRING_NAMES);
  // One identity client for both ports (none when a test replaces both).
  const identity =
    adapters.customers && adapters.platforms ? undefined : new IdentityClient(c.IDENTITY_GRPC_URL);
  const customers = adapters.customers ?? identity!;
  const platforms = adapters.platforms ?? identity!;
  const configuredStore = documentStoreOf(c, deps);
  const documentStore = adapters.documentStore?.(configuredStore) ?? configuredStore;
  const providers = {
    SANDBOX: adapters.sandboxKyc ?? new SandboxKycProvider(c.SANDBOX_TIME_SCALE),
    PRODUCTION: new ProductionKycProvider(c.PRODUCTION_KYC_RECHECK_MS),
  };
  const repos = {
    owners: new BeneficialOwnerRepository(keyring),
    documents: new DocumentRepository(keyring),
    verifications: new VerificationRepository(keyring),
    blobs: new UnreferencedBlobRepository(),
  };
  const events = new CompliancePublisher(outbox);
  const owners = new BeneficialOwnersService(orm, clock, repos.owners, customers, providers, logger);
  const abandonAfterSeconds = c.DOCUMENT_UPLOAD_ABANDON_AFTER_SECONDS;
  const documents = new DocumentsService(
    orm,
    clock,
    repos,
    customers,
    documentStore,
    keyring,
    logger,
    abandonAfterSeconds * 1000,
  );
  const verifications = new VerificationsService(orm, clock, repos, customers, providers, events, logger);
  const kycLinks = new KycLinksService(orm, clock, new KycLinkRepository(), customers, platforms, {
    sandboxTemplate: c.SANDBOX_KYC_LINK_URL_TEMPLATE,
    ttlMs: c.KYC_LINK_TTL_SECONDS * 1000,
  });
  const screening = new ScreeningWorker(
    orm,
    clock,
    repos,
    { owners, verifications },
    logger,
    c.SCREENING_POLL_MS,
  );
  const orphanChunks = new OrphanChunkSweeper(orm, repos.blobs, documentStore, logger, {
    abandonAfterSeconds,
    everyMs: c.DOCUMENT_ORPHAN_SWEEP_MS,
    metrics,
  });
  return {
    owners,
    documents,
    verifications,
    kycLinks,
    screening,
    orphanChunks,
    documentStore,
    rpc: [
      implement<compliance.ComplianceServiceServer>(
        compliance.ComplianceServiceService,
        complianceHandlers({ owners, documents, verifications, kycLinks }),
        logger,
        'sluice.compliance.v1.ComplianceService',
      ),
    ],
    consumers: [new IdentityConsumer({ bus, orm, logger, prefix: c.EVENT_SUBJECT_PREFIX, verifications })],
    workers: [screening, orphanChunks],
    close: () => {
      identity?.close();
      documentStore.close?.();
    },
  };
}
