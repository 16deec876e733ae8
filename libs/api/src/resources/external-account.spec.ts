/* eslint-disable @typescript-eslint/no-explicit-any -- the test walks the reference OpenAPI document */
import { describe, expect, it } from 'vitest';
import Ajv from 'ajv';
import type { TObject } from '@sinclair/typebox';
import { accounts, common } from '@sluice/contracts';
import {
  EXTERNAL_ACCOUNT_TYPES,
  EXTERNAL_ACCOUNT_VARIANTS,
  paymentRailsOf,
  type ExternalAccountType,
} from '@sluice/core';
import { EXTERNAL_ACCOUNT_EXAMPLES } from '@sluice/testing/external-accounts';
import { referenceDocument, referenceValidator } from '@sluice/testing/reference';
import {
  ExternalAccount,
  ExternalAccountInfo,
  externalAccountJson,
  variantSchemaName,
} from './external-account.js';

/**
 * The ExternalAccount resource shape for shape with the reference document: each variant has the
 * reference's name, properties and required fields (and its beneficiaries theirs), and the one
 * mapper's output validates against the reference's ExternalAccount schema for every variant.
 */

const schemas = () => referenceDocument().components.schemas;

/** Our own schema, compiled as the gateway compiles route schemas (named schemas inlined, `$id`s dropped). */
const ownShape = new Ajv({ strict: false, allErrors: true }).compile(
  JSON.parse(JSON.stringify(ExternalAccount), (k, v) => (k === '$id' ? undefined : v)),
);

/** Properties and required fields of a reference schema, through its allOf and $refs. */
function flatten(s: any, out = { props: {} as Record<string, any>, required: new Set<string>() }) {
  if (s.$ref) return flatten(schemas()[s.$ref.split('/').pop()], out);
  for (const part of s.allOf ?? []) flatten(part, out);
  for (const r of s.required ?? []) out.required.add(r);
  Object.assign(out.props, s.properties ?? {});
  return out;
}

function ours(type: ExternalAccountType): TObject {
  return (ExternalAccountInfo.oneOf as TObject[]).find((v) => v.properties.accountType!.const === type)!;
}
const requiredOf = (o: TObject) => new Set(o.required ?? []);

/** The proto message the accounts service returns for an example (normalized info, the rails of its fields). */
function pbOf(type: ExternalAccountType): accounts.ExternalAccount {
  const { currency, accountInfo } = EXTERNAL_ACCOUNT_EXAMPLES[type];
  const rails = Object.entries(EXTERNAL_ACCOUNT_VARIANTS[type].rails)
    .filter(([, needs]) => needs.every((f) => accountInfo[f] !== undefined))
    .map(([r]) => r);
  return {
    id: 'ExternalAccount:5e2a3a7c-8d8f-4c57-9a5e-3c1f0d3b9b11',
    platformId: 'Platform:5e2a3a7c-8d8f-4c57-9a5e-3c1f0d3b9b12',
    customerId: 'Customer:5e2a3a7c-8d8f-4c57-9a5e-3c1f0d3b9b13',
    status: accounts.ExternalAccountStatus.ACTIVE,
    currency,
    accountInfo: { ...(accountInfo as unknown as accounts.ExternalAccountInfo), paymentRails: rails },
    defaultUmaDepositAccount: false,
    beneficiaryVerificationStatus: accounts.BeneficiaryVerificationStatus.MATCHED,
    beneficiaryVerifiedData: { fullName: 'Ada Lovelace' },
    createdAt: new Date('2026-05-01T00:00:00Z'),
    updatedAt: new Date('2026-05-01T00:00:00Z'),
    environment: common.Environment.SANDBOX,
    primaryIdentifier: 'x',
  };
}

describe('ExternalAccount against the reference document', () => {
  it('has the reference’s 43 accountInfo variants, under the reference’s names', () => {
    const reference = schemas()
      .ExternalAccountInfoOneOf.oneOf.map((r: any) => r.$ref.split('/').pop())
      .sort();
    const mine = EXTERNAL_ACCOUNT_TYPES.map((t) => `${variantSchemaName(t)}ExternalAccountInfo`).sort();
    expect(mine).toEqual(reference);
    expect((ExternalAccountInfo.oneOf as TObject[]).map((v) => v.$id).sort()).toEqual(reference);
  });

  it.each(EXTERNAL_ACCOUNT_TYPES)(
    '%s: every property of the reference, required where the reference requires it',
    (type) => {
      const ref = flatten(schemas()[`${variantSchemaName(type)}ExternalAccountInfo`]);
      const mine = ours(type);
      expect(Object.keys(mine.properties)).toEqual(expect.arrayContaining(Object.keys(ref.props)));
      expect([...requiredOf(mine)].sort()).toEqual(expect.arrayContaining([...ref.required].sort()));
      // the rails: the reference's enum exactly
      if (ref.props.paymentRails)
        expect([...paymentRailsOf(type)].sort()).toEqual([...ref.props.paymentRails.items.enum].sort());
      else expect(paymentRailsOf(type)).toEqual([]);
    },
  );

  it.each(EXTERNAL_ACCOUNT_TYPES.filter((t) => paymentRailsOf(t).length > 0))(
    '%s: the individual and business beneficiaries of the reference (same fields, same required ones)',
    (type) => {
      const ref = flatten(schemas()[`${variantSchemaName(type)}ExternalAccountInfo`]).props.beneficiary;
      const refBranches = ref.oneOf.map((b: any) => flatten(b));
      const mine = (ours(type).properties.beneficiary as any).oneOf as TObject[];
      expect(mine).toHaveLength(2);
      for (const [i, branch] of mine.entries()) {
        expect(Object.keys(branch.properties).sort(), `${type} ${i}`).toEqual(
          Object.keys(refBranches[i].props).sort(),
        );
        expect([...requiredOf(branch)].sort(), `${type} ${i}`).toEqual([...refBranches[i].required].sort());
      }
    },
  );

  it.each(EXTERNAL_ACCOUNT_TYPES)(
    '%s: the mapper’s JSON is valid for the reference and for our own schema',
    (type) => {
      const json = externalAccountJson(pbOf(type));
      expect(referenceValidator('ExternalAccount')(json)).toEqual([]);
      expect(ownShape(json), JSON.stringify(ownShape.errors)).toBe(true);
      expect('paymentRails' in json.accountInfo).toBe(paymentRailsOf(type).length > 0);
    },
  );

  it('a bank account without its rails or beneficiary is not the reference’s shape (the check can fail)', () => {
    const json = externalAccountJson(pbOf('USD_ACCOUNT')) as any;
    const { paymentRails: _p, ...noRails } = json.accountInfo;
    const { beneficiary: _b, ...noBeneficiary } = json.accountInfo;
    expect(referenceValidator('ExternalAccount')({ ...json, accountInfo: noRails })).not.toEqual([]);
    expect(referenceValidator('ExternalAccount')({ ...json, accountInfo: noBeneficiary })).not.toEqual([]);
  });
});
