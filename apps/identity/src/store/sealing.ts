import {
  blindIndexes,
  isSealedValue,
  openValue,
  sealValue,
  type MasterKeyring,
  type SealedValueScheme,
} from '@sluice/crypto';
import type { PostalAddress } from '@sluice/core';
import type { ImportRow } from '../domain/bulk-import.js';
import type { BusinessInfo } from '../domain/customer.js';

/**
 * Identity's secrets and personal data at rest, sealed with the envelope kit of `@sluice/crypto`
 * under identity's master keyring: each customer's personal fields in one column
 * (`customers.personal_data`, bound to the customer id), its UMA address in another
 * (`customers.sealed_uma_address`, bound to the customer id; found and kept unique by its blind
 * index `uma_address_index`) and each webhook signing secret
 * (`webhook_signing_secrets.secret`, bound to the platform and the row), and the values of a bulk
 * import's row while it waits to be processed (`bulk_import_rows.sealed_record`, bound to the job
 * and the row number; erased once the row is processed), and an invitation's two UMA addresses
 * (`invitations.sealed_inviter_uma` and `sealed_invitee_uma`, each bound to the invitation's code;
 * nothing looks invitations up by them, so they have no blind index). Rows written before sealing
 * (plaintext) are still read, and the `rewrap` command seals them.
 */
export const IDENTITY_KEYRING = {
  current: 'IDENTITY_DATA_MASTER_KEY',
  retired: 'IDENTITY_DATA_MASTER_KEYS_RETIRED',
  idLabel: 'sluice-identity-data-master-key-id:v1',
};

export const CUSTOMER_SCHEME: SealedValueScheme = {
  prefix: 'sic1',
  context: 'sluice:identity-customer:v1',
  field: 'personal-data',
};

export const UMA_ADDRESS_SCHEME: SealedValueScheme = {
  prefix: 'siu1',
  context: 'sluice:identity-customer-uma-address:v1',
  field: 'uma-address',
};

/** Label of the blind index of a customer's UMA address. */
const UMA_ADDRESS_INDEX = 'identity:customer-uma-address:v1';

export const WEBHOOK_SECRET_SCHEME: SealedValueScheme = {
  prefix: 'siw1',
  context: 'sluice:identity-webhook-secret:v1',
  field: 'signing-secret',
};

export const BULK_IMPORT_ROW_SCHEME: SealedValueScheme = {
  prefix: 'sib1',
  context: 'sluice:identity-bulk-import-row:v1',
  field: 'record',
};

/** An invitation's two UMA addresses, each its own column and scheme (`sii1`, `sie1`). */
export const INVITATION_UMA_SCHEMES = {
  inviter: { prefix: 'sii1', context: 'sluice:identity-invitation-inviter-uma:v1', field: 'inviter-uma' },
  invitee: { prefix: 'sie1', context: 'sluice:identity-invitation-invitee-uma:v1', field: 'invitee-uma' },
} satisfies Record<string, SealedValueScheme>;

/** A customer's personal fields: what is sealed (everything else of a customer is filtered on or public). */
export interface PersonalData {
  email?: string;
  fullName?: string;
  birthDate?: string;
  nationality?: string;
  address?: PostalAddress;
  businessInfo?: BusinessInfo;
}

const PERSONAL_FIELDS = ['email', 'fullName', 'birthDate', 'nationality', 'address', 'businessInfo'] as const;

/** The personal fields of a customer (absent ones left out). */
export function personalDataOf(c: PersonalData): PersonalData {
  const p: Record<string, unknown> = {};
  for (const f of PERSONAL_FIELDS) if (c[f] !== undefined && c[f] !== null) p[f] = c[f];
  return p as PersonalData;
}

export function sealPersonalData(keyring: MasterKeyring, customerId: string, c: PersonalData): string {
  return sealValue(keyring, CUSTOMER_SCHEME, customerId, JSON.stringify(personalDataOf(c)));
}

export function openPersonalData(keyring: MasterKeyring, customerId: string, sealed: string): PersonalData {
  return JSON.parse(openValue(keyring, CUSTOMER_SCHEME, customerId, sealed)) as PersonalData;
}

export function sealUmaAddress(keyring: MasterKeyring, customerId: string, umaAddress: string): string {
  return sealValue(keyring, UMA_ADDRESS_SCHEME, customerId, umaAddress);
}

export function openUmaAddress(keyring: MasterKeyring, customerId: string, sealed: string): string {
  return openValue(keyring, UMA_ADDRESS_SCHEME, customerId, sealed);
}

/** Seals the inviter's or the invitee's UMA address of the invitation `code` (its row id). */
export function sealInvitationUma(
  keyring: MasterKeyring,
  who: keyof typeof INVITATION_UMA_SCHEMES,
  code: string,
  umaAddress: string,
): string {
  return sealValue(keyring, INVITATION_UMA_SCHEMES[who], code, umaAddress);
}

export function openInvitationUma(
  keyring: MasterKeyring,
  who: keyof typeof INVITATION_UMA_SCHEMES,
  code: string,
  sealed: string,
): string {
  return openValue(keyring, INVITATION_UMA_SCHEMES[who], code, sealed);
}

/**
 * The blind indexes of a (normalized) UMA address: under the current key (the one to store)
 * first, then under each retired key (rows written before a rotation, until rewrap).
 */
export function umaAddressIndexes(keyring: MasterKeyring, umaAddress: string): string[] {
  return blindIndexes(keyring, UMA_ADDRESS_INDEX, umaAddress);
}

/** The owner a webhook signing secret is bound to: its platform and its row. */
export const webhookSecretOwner = (platformId: string, rowId: string) => `${platformId}|${rowId}`;

export function sealWebhookSecret(keyring: MasterKeyring, platformId: string, rowId: string, secret: string): string {
  return sealValue(keyring, WEBHOOK_SECRET_SCHEME, webhookSecretOwner(platformId, rowId), secret);
}

/** The secret of a row: opened when sealed, as stored when written before sealing (`whsec_...`). */
export function openWebhookSecret(keyring: MasterKeyring, platformId: string, rowId: string, stored: string): string {
  return isSealedValue(WEBHOOK_SECRET_SCHEME, stored)
    ? openValue(keyring, WEBHOOK_SECRET_SCHEME, webhookSecretOwner(platformId, rowId), stored)
    : stored;
}

/** The owner a bulk import row's values are bound to: its job and its row number. */
export const importRowOwner = (jobId: string, row: number) => `${jobId}|${row}`;

export function sealImportRow(keyring: MasterKeyring, jobId: string, row: number, values: ImportRow['values']): string {
  return sealValue(keyring, BULK_IMPORT_ROW_SCHEME, importRowOwner(jobId, row), JSON.stringify(values));
}

export function openImportRow(keyring: MasterKeyring, jobId: string, row: number, sealed: string): ImportRow['values'] {
  return JSON.parse(openValue(keyring, BULK_IMPORT_ROW_SCHEME, importRowOwner(jobId, row), sealed)) as ImportRow['values'];
}
