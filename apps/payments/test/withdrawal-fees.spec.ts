import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common, payments as pb } from '@sluice/contracts';
import { DomainError, newId } from '@sluice/core';
import type { PromiseClient } from '@sluice/rpc';
import { rejection, type World } from '@sluice/testing';
import { startPaymentsWithNeighbours } from './support/neighbours.js';

// POST /crypto/estimate-withdrawal-fee over real gRPC, with the real accounts service (the internal
// account, its kind and currency) started in-process: the sandbox fee table per network, every bad
// field named, and nothing moved.

let stack: Awaited<ReturnType<typeof startPaymentsWithNeighbours>>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let world: World;
let platformId: string;
let otherPlatformId: string;
let usdcAccount: string;
let btcAccount: string;
let usdAccount: string;
let otherUsdc: string;

const SOLANA_ADDRESS = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
const EVM_ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const LIGHTNING_ADDRESS = 'alice@wallet.example.com';

beforeAll(async () => {
  stack = await startPaymentsWithNeighbours('wdfee');
  ({ client, world } = stack);
  const P = await world.platform('SANDBOX');
  platformId = P.id;
  const customerId = (await world.customer(platformId, { platformCustomerId: 'wd-1' })).id;
  usdcAccount = (await world.internalAccount(P, customerId, 'USDC', { balance: 5_000_000n })).id;
  btcAccount = (await world.internalAccount(P, customerId, 'BTC')).id;
  usdAccount = (await world.internalAccount(P, customerId, 'USD')).id;
  const Q = await world.platform('SANDBOX');
  otherPlatformId = Q.id;
  otherUsdc = (await world.internalAccount(Q, null, 'USDC')).id;
});

afterAll(async () => {
  await stack?.stop();
});


const estimate = (over: Partial<pb.EstimateCryptoWithdrawalFeeRequest> = {}) =>
  client.estimateCryptoWithdrawalFee({
    platformId,
    environment: common.Environment.SANDBOX,
    internalAccountId: usdcAccount,
    currency: 'USDC',
    cryptoNetwork: 'SOLANA',
    amount: 1_000_000n,
    destinationAddress: SOLANA_ADDRESS,
    ...over,
  });

/** The field errors of an INVALID_INPUT rejection. */
const fieldsOf = (e: DomainError) => ((e.details?.fields ?? e.details?.errors ?? []) as { field: string }[]).map((f) => f.field);

describe('EstimateCryptoWithdrawalFee', () => {
  it('answers the sandbox table: SOLANA costs 5,000 lamports, 0.001 USDC, and the rest arrives', async () => {
    expect(await estimate()).toEqual({
      networkFee: 5_000n,
      networkFeeAsset: 'SOL',
      applicationFee: 0n,
      totalFee: 1_000n,
      netAmount: 999_000n,
    });
    // The same account on an EVM network, by the EVM grammar.
    expect(await estimate({ cryptoNetwork: 'ETHEREUM', amount: 10_000_000n, destinationAddress: EVM_ADDRESS })).toEqual({
      networkFee: 1_300_000_000_000_000n,
      networkFeeAsset: 'ETH',
      applicationFee: 0n,
      totalFee: 4_550_000n,
      netAmount: 5_450_000n,
    });
    // BTC over Lightning to a lightning address: the fee is in sats, the asset itself.
    expect(
      await estimate({ internalAccountId: btcAccount, currency: 'BTC', cryptoNetwork: 'LIGHTNING', amount: 5_000n, destinationAddress: LIGHTNING_ADDRESS }),
    ).toEqual({ networkFee: 10n, networkFeeAsset: 'BTC', applicationFee: 0n, totalFee: 10n, netAmount: 4_990n });
    // An estimate moves nothing.
    expect((await world.balance(platformId, usdcAccount)).posted).toBe(5_000_000n);
  });

  it('refuses each bad field by name: network, currency, address (the wallet grammar), account id, amount', async () => {
    const network = await rejection(estimate({ cryptoNetwork: 'DOGECOIN' }));
    expect(network.code).toBe('INVALID_INPUT');
    expect(fieldsOf(network)).toEqual(['cryptoNetwork']);
    // BITCOIN on chain: no external-account variant pays there, so no grammar and no fee.
    expect(fieldsOf(await rejection(estimate({ cryptoNetwork: 'BITCOIN' })))).toEqual(['cryptoNetwork']);
    expect(fieldsOf(await rejection(estimate({ currency: 'BTC' })))).toEqual(['currency']);
    expect(fieldsOf(await rejection(estimate({ currency: 'XYZ' })))).toEqual(['currency']);
    // A Solana address on Ethereum, a Solana address with a 0 (not base58), an EVM address with a bad checksum.
    expect(fieldsOf(await rejection(estimate({ cryptoNetwork: 'ETHEREUM' })))).toEqual(['destinationAddress']);
    const bad58 = await rejection(estimate({ destinationAddress: `0${SOLANA_ADDRESS.slice(1)}` }));
    expect(bad58.message).toContain('base58');
    expect(fieldsOf(bad58)).toEqual(['destinationAddress']);
    const checksum = await rejection(
      estimate({ cryptoNetwork: 'BASE', destinationAddress: '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }),
    );
    expect(fieldsOf(checksum)).toEqual(['destinationAddress']);
    expect(fieldsOf(await rejection(estimate({ internalAccountId: 'InternalAccount:nope' })))).toEqual(['internalAccountId']);
    expect(fieldsOf(await rejection(estimate({ amount: 0n })))).toEqual(['amount']);
    // Every fault at once.
    expect(fieldsOf(await rejection(estimate({ cryptoNetwork: 'NOPE', amount: 0n, destinationAddress: '' })))).toEqual(
      expect.arrayContaining(['cryptoNetwork', 'amount', 'destinationAddress']),
    );
  });

  it('checks the account: a fiat account or another currency is 400, an amount not above the fee AMOUNT_OUT_OF_RANGE', async () => {
    const fiat = await rejection(estimate({ internalAccountId: usdAccount }));
    expect(fieldsOf(fiat)).toEqual(['internalAccountId']);
    const other = await rejection(estimate({ currency: 'USDT' }));
    expect(other.code).toBe('INVALID_INPUT');
    expect(fieldsOf(other)).toEqual(['currency']);
    const small = await rejection(estimate({ amount: 1_000n }));
    expect(small.code).toBe('AMOUNT_OUT_OF_RANGE');
    expect(small.details).toMatchObject({ field: 'amount' });
  });

  it("another platform's account and an unknown one are the same INTERNAL_ACCOUNT_NOT_FOUND", async () => {
    const foreign = await rejection(estimate({ internalAccountId: otherUsdc }));
    const unknown = await rejection(estimate({ internalAccountId: newId('InternalAccount') }));
    expect(foreign.code).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    expect(unknown.code).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    expect(otherPlatformId).not.toBe(platformId);
  });

  it('production has no network-fee source: RAIL_UNAVAILABLE', async () => {
    const P = await world.platform('PRODUCTION');
    const acct = (await world.internalAccount(P, null, 'USDC')).id;
    const e = await rejection(estimate({ platformId: P.id, environment: common.Environment.PRODUCTION, internalAccountId: acct }));
    expect(e.code).toBe('RAIL_UNAVAILABLE');
  });
});
