import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex } from '@noble/hashes/utils';
import { EXTERNAL_ACCOUNT_VARIANTS, type ExternalAccountVariant, type FieldFormat } from './external-accounts.js';

/**
 * The grammars of wallet addresses and Lightning destinations: the one set of rules the
 * external-account variants are checked with (accounts, `accountInfo.address`, `invoice`, ...)
 * and a crypto withdrawal's `destinationAddress` (payments). Each check returns undefined when
 * the value is valid, else the reason (the field error message).
 */

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';

/** Solana address: base58 of a 32-byte key, 32 to 44 characters. */
export function checkSolanaAddress(v: string): string | undefined {
  return new RegExp(`^${BASE58}{32,44}$`).test(v)
    ? undefined
    : 'must be a base58 Solana address (32 to 44 characters)';
}

/** Tron address: base58, 34 characters starting with T. */
export function checkTronAddress(v: string): string | undefined {
  return new RegExp(`^T${BASE58}{33}$`).test(v)
    ? undefined
    : 'must be a base58 Tron address (34 characters starting with T)';
}

/**
 * EVM address (Ethereum, Polygon, Base): 0x and 40 hex digits; a mixed-case address
 * must carry a valid EIP-55 checksum.
 */
export function checkEvmAddress(v: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{40}$/.test(v)) return 'must be 0x followed by 40 hexadecimal digits';
  const body = v.slice(2);
  if (body === body.toLowerCase() || body === body.toUpperCase()) return undefined;
  const hash = bytesToHex(keccak_256(body.toLowerCase()));
  for (let i = 0; i < 40; i++) {
    const c = body[i]!;
    if (/[a-f]/i.test(c) && (parseInt(hash[i]!, 16) >= 8 ? c !== c.toUpperCase() : c !== c.toLowerCase()))
      return 'EIP-55 checksum does not match';
  }
  return undefined;
}

/**
 * Spark address: human-readable part `spark` (mainnet) or `sparkt`/`sparkrt`/`sparks`/`sparkl`
 * (test networks), separator `1`, then lower-case letters and digits. The bech32m checksum is
 * not verified here (the Spark SDK does it when paying).
 */
export function checkSparkAddress(v: string): string | undefined {
  return /^spark(t|rt|s|l)?1[a-z0-9]{20,120}$/.test(v) ? undefined : 'must be a Spark address (spark1...)';
}

/** BOLT11 invoice: `ln` + network prefix + bech32 data, lower case. */
export function checkBolt11(v: string): string | undefined {
  return /^ln(bc|tb|bcrt|tbs|sb)[0-9a-z]{20,}$/.test(v.toLowerCase()) && v === v.toLowerCase()
    ? undefined
    : 'must be a BOLT11 invoice (lnbc...)';
}

/** BOLT12 offer: `lno1` + bech32 data. */
export function checkBolt12(v: string): string | undefined {
  return /^lno1[0-9a-z]{20,}$/.test(v) ? undefined : 'must be a BOLT12 offer (lno1...)';
}

/** Lightning address: `user@domain` (LUD-16: lower-case username of a-z0-9-_.). */
export function checkLightningAddress(v: string): string | undefined {
  return /^[a-z0-9\-_.+]{1,64}@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/.test(
    v,
  )
    ? undefined
    : 'must be a lightning address (user@domain, lower case)';
}

/** The network of a `wallet` field format. */
export type WalletNetwork = Extract<FieldFormat, { kind: 'wallet' }>['network'];

/** A wallet address of `network` (the `wallet` field format of the external-account variants). */
export function checkWalletAddress(network: WalletNetwork, v: string): string | undefined {
  return {
    SPARK: checkSparkAddress,
    SOLANA: checkSolanaAddress,
    TRON: checkTronAddress,
    EVM: checkEvmAddress,
  }[network](v);
}

/**
 * The external-account variant a crypto network pays to: `<NETWORK>_WALLET` (SOLANA, TRON,
 * POLYGON, BASE, ETHEREUM, SPARK) or LIGHTNING; undefined for a network no variant takes
 * (BITCOIN on chain, for one).
 */
export function cryptoNetworkVariant(network: string): ExternalAccountVariant | undefined {
  if (!/^[A-Z]+$/.test(network)) return undefined;
  const type = network === 'LIGHTNING' ? 'LIGHTNING' : `${network}_WALLET`;
  return Object.prototype.hasOwnProperty.call(EXTERNAL_ACCOUNT_VARIANTS, type)
    ? EXTERNAL_ACCOUNT_VARIANTS[type as keyof typeof EXTERNAL_ACCOUNT_VARIANTS]
    : undefined;
}

/** Every crypto network an external-account variant pays to. */
export const CRYPTO_NETWORKS: readonly string[] = Object.keys(EXTERNAL_ACCOUNT_VARIANTS)
  .filter((t) => t === 'LIGHTNING' || t.endsWith('_WALLET'))
  .map((t) => (t === 'LIGHTNING' ? 'LIGHTNING' : t.slice(0, -'_WALLET'.length)));

/**
 * A destination on `network` as its variant's identifiers take it: a wallet address, or for
 * LIGHTNING a BOLT11 invoice, a BOLT12 offer or a lightning address. undefined when valid.
 */
export function checkCryptoDestination(network: string, v: string): string | undefined {
  const variant = cryptoNetworkVariant(network);
  if (!variant) return `${network} is not a network Sluice pays to`;
  const reasons: string[] = [];
  for (const field of variant.identifiers) {
    const format = variant.fields[field]?.format;
    const reason =
      format?.kind === 'wallet'
        ? checkWalletAddress(format.network, v)
        : format?.kind === 'bolt11'
          ? checkBolt11(v)
          : format?.kind === 'bolt12'
            ? checkBolt12(v)
            : format?.kind === 'lightningAddress'
              ? checkLightningAddress(v)
              : 'has no address grammar';
    if (!reason) return undefined;
    reasons.push(reason);
  }
  return reasons.join(', or ');
}
