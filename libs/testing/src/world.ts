import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { accounts, common, identity, walletAuth } from '@sluice/contracts';
import { newId } from '@sluice/core';
import type { PromiseClient } from '@sluice/rpc';
import { decryptSessionBundle, generateKeyPair, stamp } from '@sluice/wallet-client';

/**
 * The world a test needs, made through the real services' own APIs: platforms and customers in
 * identity, internal accounts funded through accounts' sandbox funding, external accounts, and an
 * embedded-wallet session in wallet-auth whose key signs. What a test reads back (balances,
 * holds, the reconciled ledger, system accounts) is what the owning service answers or stores.
 * Each helper needs only the clients of the services it touches.
 */
export interface WorldClients {
  identity: PromiseClient<identity.IdentityServiceClient>;
  accounts?: PromiseClient<accounts.AccountsServiceClient>;
  walletAuth?: PromiseClient<walletAuth.WalletAuthServiceClient>;
  /** A pool on the test database (accounts' tables are in schema `accounts`). */
  sql?: pg.Pool;
}

export type EnvironmentName = 'SANDBOX' | 'PRODUCTION';
export type SystemAccountName = 'SETTLEMENT' | 'FEES' | 'FX' | 'CLEARING';

const ENV = { SANDBOX: common.Environment.SANDBOX, PRODUCTION: common.Environment.PRODUCTION } as const;

/** A German IBAN (mod-97 valid) whose account number is `account` (10 digits; the sandbox reads its last 3). */
export function germanIban(account: string): string {
  const bban = `37040044${account}`;
  // Letters D=13, E=14; check digits = 98 − (bban + "DE00" as digits) mod 97.
  const numeric = `${bban}131400`;
  let rem = 0;
  for (const ch of numeric) rem = (rem * 10 + Number(ch)) % 97;
  return `DE${String(98 - rem).padStart(2, '0')}${bban}`;
}

/** A platform made by identity, with the bootstrap credential that created it. */
export interface WorldPlatform {
  id: string;
  environment: EnvironmentName;
  tokenId: string;
  clientSecret: string;
}

/** One hold of the accounts ledger on an account, as GetHold answers it. */
export type WorldHold = accounts.Hold;

export class World {
  constructor(private readonly c: WorldClients) {}

  private get accounts(): PromiseClient<accounts.AccountsServiceClient> {
    if (!this.c.accounts) throw new Error('this world has no accounts service');
    return this.c.accounts;
  }

  private get sql(): pg.Pool {
    if (!this.c.sql) throw new Error('this world has no database pool');
    return this.c.sql;
  }

  /**
   * A new platform (identity's EnsurePlatformCredential, as `npm start` bootstraps one), with
   * embedded wallets in `embeddedWalletCurrencies` when given.
   */
  async platform(
    environment: EnvironmentName = 'SANDBOX',
    opts: { embeddedWalletCurrencies?: string[]; name?: string } = {},
  ): Promise<WorldPlatform> {
    const tokenId = newId('Token');
    const clientSecret = randomBytes(24).toString('base64url');
    const { platform } = await this.c.identity.ensurePlatformCredential({
      environment: ENV[environment],
      tokenId,
      clientSecret,
      platformName: opts.name ?? `platform-${randomBytes(4).toString('hex')}`,
    });
    if (opts.embeddedWalletCurrencies) {
      await this.c.identity.updatePlatformConfig({
        platformId: platform!.id,
        embeddedWalletConfig: { currencies: opts.embeddedWalletCurrencies, otpLength: 6, oidcIssuers: [] },
        clearEmbeddedWalletConfig: false,
      });
    }
    return { id: platform!.id, environment, tokenId, clientSecret };
  }

  /** A new individual customer of the platform (identity's CreateCustomer). */
  async customer(
    platformId: string,
    over: Partial<identity.CreateCustomerRequest> = {},
  ): Promise<identity.Customer> {
    const { customer } = await this.c.identity.createCustomer({
      platformId,
      customerType: identity.CustomerType.INDIVIDUAL,
      currencies: [],
      fullName: 'Ada Lovelace',
      ...over,
    });
    return customer!;
  }

  /**
   * The customer's (or, without one, the platform's) internal account in `currency` of `type`,
   * funded with `balance` by accounts' SandboxFund (sandbox platforms only).
   */
  async internalAccount(
    platform: Pick<WorldPlatform, 'id' | 'environment'>,
    owner: string | null,
    currency: string,
    opts: { balance?: bigint; type?: 'EMBEDDED_WALLET' } = {},
  ): Promise<accounts.InternalAccount> {
    const { accounts: list } = owner
      ? await this.accounts.ensureCustomerAccounts({
          platformId: platform.id,
          customerId: owner,
          currencies: [currency],
          environment: ENV[platform.environment],
        })
      : await this.accounts.ensurePlatformAccounts({
          platformId: platform.id,
          currencies: [currency],
          environment: ENV[platform.environment],
        });
    const wanted = list.find(
      (a) =>
        a.currency === currency &&
        (opts.type === 'EMBEDDED_WALLET'
          ? a.type === accounts.InternalAccountType.EMBEDDED_WALLET
          : a.type !== accounts.InternalAccountType.EMBEDDED_WALLET),
    );
    if (!wanted)
      throw new Error(
        `accounts made no ${opts.type ?? ''} ${currency} account for ${owner ?? 'the platform'}`,
      );
    if (opts.balance) await this.fund(platform.id, wanted.id, opts.balance);
    return wanted;
  }

  /** Credits the account from outside (SandboxFund). */
  async fund(platformId: string, accountId: string, amount: bigint): Promise<void> {
    await this.accounts.sandboxFund({ platformId, accountId, amount });
  }

  /** An external account of the customer (or the platform) made by accounts' CreateExternalAccount. */
  async externalAccount(
    platform: Pick<WorldPlatform, 'id' | 'environment'>,
    owner: string | null,
    currency: string,
    accountInfo: accounts.ExternalAccountInfo,
  ): Promise<accounts.ExternalAccount> {
    const { account } = await this.accounts.createExternalAccount({
      platformId: platform.id,
      environment: ENV[platform.environment],
      ...(owner ? { customerId: owner } : {}),
      currency,
      // Bank accounts name their beneficiary; wallets have none.
      accountInfo: accountInfo.accountType.endsWith('_ACCOUNT')
        ? ({
            beneficiary: {
              beneficiaryType: 'INDIVIDUAL',
              fullName: 'Ada Lovelace',
              address: { line1: '1 Main St', postalCode: '10115', country: 'DE' },
            },
            ...accountInfo,
          } as accounts.ExternalAccountInfo)
        : accountInfo,
    });
    return account!;
  }

  /** Posted and available balance of an internal account, as GetInternalAccount answers them. */
  async balance(platformId: string, accountId: string): Promise<{ posted: bigint; available: bigint }> {
    const { account } = await this.accounts.getInternalAccount({ platformId, accountId });
    return { posted: account!.balance!.amount, available: account!.availableAmount };
  }

  /**
   * The posted balance of one of the platform's system accounts in `currency`: the sum of its
   * journal lines in posted entries (accounts keeps running totals for internal accounts only).
   */
  async systemBalance(platformId: string, name: SystemAccountName, currency: string): Promise<bigint> {
    const { rows } = await this.sql.query<{ balance: string | null }>(
      `SELECT sum(l.amount) AS balance FROM accounts.journal_lines l
         JOIN accounts.journal_entries e ON e.platform_id = l.platform_id AND e.id = l.entry_id
        WHERE l.platform_id = $1 AND l.account_id = $2 AND e.phase IN ('POSTED', 'POST_PENDING')`,
      [platformId, `system:${name.toLowerCase()}:${currency}:${platformId}`],
    );
    return BigInt(rows[0]?.balance ?? 0);
  }

  /** Every hold the ledger has placed on the account, oldest first, as GetHold answers each. */
  async holdsOf(platformId: string, accountId: string): Promise<WorldHold[]> {
    const { rows } = await this.sql.query<{ id: string }>(
      `SELECT e.id FROM accounts.journal_entries e
         WHERE e.platform_id = $1 AND e.phase = 'PENDING'
           AND EXISTS (SELECT 1 FROM accounts.journal_lines l
                        WHERE l.platform_id = e.platform_id AND l.entry_id = e.id AND l.account_id = $2)
         ORDER BY e.created_at, e.id`,
      [platformId, accountId],
    );
    const holds: WorldHold[] = [];
    for (const r of rows) holds.push((await this.accounts.getHold({ platformId, holdId: r.id })).hold!);
    return holds;
  }

  /** Whether the ledger holds a journal entry of this id. */
  async hasEntry(platformId: string, entryId: string): Promise<boolean> {
    const { rows } = await this.sql.query(
      `SELECT 1 FROM accounts.journal_entries WHERE platform_id = $1 AND id = $2`,
      [platformId, entryId],
    );
    return rows.length === 1;
  }

  /** ReconcileLedger of the platform: every sum zero, nothing mismatched. */
  async reconcile(platformId: string): Promise<accounts.ReconcileLedgerResponse> {
    return this.accounts.reconcileLedger({ platformId });
  }

  /**
   * A session of the embedded wallet `accountId` in wallet-auth: its first credential (EMAIL_OTP,
   * which needs no signature), verified with the sandbox OTP; returns the session's signing key,
   * opened client-side, and a signer of payloads with it (the Service-Wallet-Signature stamp).
   */
  async walletSession(
    platformId: string,
    accountId: string,
  ): Promise<{ sessionKey: string; sign(payloadToSign: string): string }> {
    const wa = this.c.walletAuth;
    if (!wa) throw new Error('this world has no wallet-auth service');
    const { authMethod } = await wa.createCredential({
      platformId,
      accountId,
      type: walletAuth.AuthMethodType.EMAIL_OTP,
      email: `holder-${randomBytes(3).toString('hex')}@example.com`,
      signed: { bodyJson: '' },
    });
    const key = generateKeyPair();
    const { session } = await wa.verifyCredential({
      platformId,
      credentialId: authMethod!.id,
      type: walletAuth.AuthMethodType.EMAIL_OTP,
      otp: '000000',
      clientPublicKey: key.publicKey,
    });
    const sessionKey = await decryptSessionBundle(session!.encryptedSessionSigningKey!, key.privateKey);
    return { sessionKey, sign: (payloadToSign) => stamp(payloadToSign, sessionKey) };
  }
}
