import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { common, compliance, identity } from '@sluice/contracts';
import { newId, type DomainError } from '@sluice/core';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import { startService, type ServiceDeps, type StartOptions } from '@sluice/runtime';
import {
  SMALL_JPEG,
  SMALL_PDF,
  SMALL_PNG,
  TEST_MASTER_KEYS,
  createTestDatabase,
  dropStreams,
  natsUrl,
  testPrefix,
  type TestDatabase,
} from '@sluice/testing';
import { identityService } from '@sluice/identity';
import { defineComplianceService, type ComplianceConfig } from '../../src/service.js';
import type { ComplianceAdapters, ComplianceGraph } from '../../src/compose.js';

export type ComplianceClient = PromiseClient<compliance.ComplianceServiceClient>;
export type IdentityClient = PromiseClient<identity.IdentityServiceClient>;

export interface Harness {
  compliance: ComplianceClient;
  identity: IdentityClient;
  /** Connected to the test database (schemas `compliance` and `identity`). */
  sql: pg.Client;
  env: Record<string, string>;
  identityAddress: string;
  complianceAddress: string;
  /** The object graph of the running compliance service. */
  graph: ComplianceGraph;
  /** What the running compliance service was given (its orm, logger, metrics, config). */
  deps: ServiceDeps<ComplianceConfig>;
  stop(): Promise<void>;
}

/**
 * Identity and compliance started in-process through their definitions, on a fresh database and
 * subject prefix: compliance reads customers from identity over gRPC, identity applies
 * compliance's verification events. Sandbox screenings take 1 s × SANDBOX_TIME_SCALE (0.05 here).
 */
export async function startCompliance(
  label: string,
  extraEnv: Record<string, string> = {},
  adapters: ComplianceAdapters = {},
  options: Pick<StartOptions, 'clock'> = {},
): Promise<Harness> {
  const db: TestDatabase = await createTestDatabase(`compliance${label}`);
  const prefix = testPrefix(label);
  const nats = await natsUrl();
  const common = {
    DATABASE_URL: db.url,
    NATS_URL: nats,
    EVENT_SUBJECT_PREFIX: prefix,
    GRPC_PORT: '0',
    LOG_LEVEL: 'silent',
  };
  const id = await startService(identityService, {
    ...common,
    ...TEST_MASTER_KEYS,
    SANDBOX_UMA_DOMAIN: 'sandbox.sluice.test',
  });
  const env = {
    ...common,
    IDENTITY_GRPC_URL: `127.0.0.1:${id.port}`,
    DOCUMENT_MASTER_KEY: randomBytes(32).toString('base64'),
    SANDBOX_TIME_SCALE: '0.05',
    // A minute: screenings are decided because their commit announces them and the worker sleeps until they
    // are due, not because it polls (a test waits 10 s at most).
    SCREENING_POLL_MS: '60000',
    PRODUCTION_KYC_RECHECK_MS: '1000',
    ...extraEnv,
  };
  const svc = await startService(defineComplianceService(adapters), env, options);
  const complianceClient = createRpcClient(compliance.ComplianceServiceClient, `127.0.0.1:${svc.port}`, {
    defaultDeadlineMs: 30_000,
  });
  const identityClient = createRpcClient(identity.IdentityServiceClient, `127.0.0.1:${id.port}`);
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  return {
    compliance: complianceClient,
    identity: identityClient,
    sql,
    env,
    identityAddress: `127.0.0.1:${id.port}`,
    complianceAddress: `127.0.0.1:${svc.port}`,
    graph: svc.graph,
    deps: svc.deps,
    async stop() {
      complianceClient.close();
      identityClient.close();
      await sql.end();
      await svc.stop();
      await id.stop();
      await dropStreams(nats, prefix);
      await db.drop();
    },
  };
}

/** A fresh platform (sandbox unless said). */
export async function newPlatform(
  h: Harness,
  environment: common.Environment = common.Environment.SANDBOX,
): Promise<string> {
  return (await newPlatformWithCredential(h, environment)).platformId;
}

/** A fresh platform (sandbox unless said) and the HTTP Basic header of its API credential. */
export async function newPlatformWithCredential(
  h: Harness,
  environment: common.Environment = common.Environment.SANDBOX,
): Promise<{ platformId: string; authorization: string }> {
  const tokenId = newId('Token');
  const clientSecret = randomBytes(32).toString('base64url');
  const r = await h.identity.ensurePlatformCredential({
    environment,
    tokenId,
    clientSecret,
    platformName: `platform-${randomBytes(4).toString('hex')}`,
  });
  return {
    platformId: r.platform!.id,
    authorization: `Basic ${Buffer.from(`${tokenId}:${clientSecret}`).toString('base64')}`,
  };
}

const address = { line1: '123 Market Street', postalCode: '94105', country: 'US' };

/** A complete BUSINESS customer (registrationNumber given: its last 3 digits pick the KYB outcome). */
export async function newBusiness(
  h: Harness,
  platformId: string,
  registrationNumber = 'REG-100',
  over: Partial<identity.CreateCustomerRequest> = {},
): Promise<identity.Customer> {
  const r = await h.identity.createCustomer({
    platformId,
    customerType: identity.CustomerType.BUSINESS,
    currencies: [],
    businessInfo: {
      legalName: 'Acme Corporation',
      country: 'US',
      registrationNumber,
      entityType: 'LLC',
      countriesOfOperation: [],
      expectedRecipientJurisdictions: [],
    },
    address,
    ...over,
  });
  return r.customer!;
}

/** A complete INDIVIDUAL customer (its fullName's last 3 characters pick the KYC outcome). */
export async function newIndividual(
  h: Harness,
  platformId: string,
  fullName = 'Ana Lopez',
): Promise<identity.Customer> {
  const r = await h.identity.createCustomer({
    platformId,
    customerType: identity.CustomerType.INDIVIDUAL,
    currencies: [],
    fullName,
    birthDate: '1990-01-15',
    nationality: 'US',
    address,
  });
  return r.customer!;
}

/** Personal info of a beneficial owner (the lastName's last 3 characters pick its KYC outcome). */
export function personalInfo(
  lastName = 'Smith',
  over: Partial<compliance.PersonalInfo> = {},
): compliance.PersonalInfo {
  return {
    firstName: 'Jane',
    lastName,
    birthDate: '1978-06-15',
    nationality: 'US',
    address,
    idType: compliance.IdentificationType.SSN,
    identifier: '123-45-6789',
    ...over,
  };
}

/** Uploads a file through the client-streaming RPC in pieces of `piece` bytes. */
export async function upload(
  h: Harness,
  header: Partial<compliance.DocumentHeader> & { platformId: string },
  file: Buffer,
  piece = 64 * 1024,
): Promise<compliance.Document> {
  const call = h.compliance.uploadDocument();
  await call.write({
    header: {
      documentType: compliance.DocumentType.PASSPORT,
      country: 'US',
      side: compliance.DocumentSide.UNSPECIFIED,
      fileName: 'file.bin',
      ...header,
    },
  });
  for (let i = 0; i < file.length; i += piece) await call.write({ chunk: file.subarray(i, i + piece) });
  await call.write({ trailer: { sizeBytes: BigInt(file.length) } });
  return (await call.end()).document!;
}

/** Reads a document's file back, chunk by chunk. */
export async function download(h: Harness, platformId: string, documentId: string): Promise<Buffer> {
  const first = await h.compliance.readDocumentContent({ platformId, documentId, chunkIndex: 0 });
  const parts = [first.data];
  for (let i = 1; i < first.document!.chunkCount; i++)
    parts.push((await h.compliance.readDocumentContent({ platformId, documentId, chunkIndex: i })).data);
  return Buffer.concat(parts);
}

/** Awaits a rejection and returns the DomainError the server raised. */
export { rejection } from '@sluice/testing';

/** The field names of an INVALID_INPUT error. */
export function fieldsOf(e: DomainError): string[] {
  if (e.code !== 'INVALID_INPUT') throw new Error(`expected INVALID_INPUT, got ${e.code}: ${e.message}`);
  return ((e.details?.errors ?? []) as { field: string }[]).map((x) => x.field);
}

/** Small real files of each accepted type, and a text file. */
export const FILES = {
  pdf: SMALL_PDF,
  jpeg: SMALL_JPEG,
  png: SMALL_PNG,
  text: Buffer.from('This is a plain text file someone renamed to passport.pdf\n'),
};
