import { createHash } from 'node:crypto';
import { pixPayload, type AccountOrWalletInfo } from '@sluice/core';
import type { InternalAccountRecord } from './internal-account.js';

/**
 * Funding payment instructions of internal accounts.
 *
 * Sandbox accounts get instructions in the shape of the public API's
 * `PaymentInstructions` for their currency, generated deterministically from the
 * account's unique funding sequence number (bank-style account numbers, IBAN,
 * CLABE, ... with valid check digits) or from its id (wallet addresses), so
 * they are stable across reads and unique per account. Production accounts get
 * none until a banking/custody partner adapter issues real ones.
 */

export type FundingInstruction = {
  accountOrWalletInfo: AccountOrWalletInfo;
  instructionsNotes: string;
  isPlatformAccount: boolean;
};

export const SANDBOX_BANK_NAME = 'Sluice Sandbox Bank';
/** A routing number with a valid ABA checksum, reserved for tests by convention. */
export const SANDBOX_ROUTING_NUMBER = '110000000';
const SANDBOX_SWIFT = 'SLUIDEB1XXX';
const SANDBOX_BLZ = '10020030';
const SANDBOX_SORT_CODE = '040075';
const SANDBOX_CLABE_BANK = '646';
const SANDBOX_CLABE_PLAZA = '180';
const SANDBOX_CAD_BANK = '998';
const SANDBOX_CAD_BRANCH = '00001';

type Account = Pick<
  InternalAccountRecord,
  'id' | 'owner' | 'type' | 'currency' | 'environment' | 'fundingSeq' | 'fundingReference'
>;

/** The funding payment instructions of an account ([] when none apply; see the module comment). */
export function fundingInstructions(a: Account): FundingInstruction[] {
  if (a.environment !== 'SANDBOX' || a.type === 'EMBEDDED_WALLET') return [];
  const info = sandboxAccountInfo(a);
  if (!info) return [];
  const isPlatformAccount = a.owner === 'PLATFORM';
  const simulate = `In the sandbox, simulate a deposit with POST /sandbox/internal-accounts/${a.id}/fund.`;
  const instructionsNotes = info.address
    ? `Send only ${info.assetType} to this ${networkName(info.accountType)} address; deposits are credited to this account. ${simulate}`
    : `Include the reference ${a.fundingReference} with the payment so it is credited to this account. ${simulate}`;
  return [{ accountOrWalletInfo: info, instructionsNotes, isPlatformAccount }];
}

function networkName(accountType: string): string {
  return { SOLANA_WALLET: 'Solana', TRON_WALLET: 'Tron', SPARK_WALLET: 'Spark' }[accountType] ?? accountType;
}

function sandboxAccountInfo(a: Account): AccountOrWalletInfo | undefined {
  const seq = a.fundingSeq;
  const reference = a.fundingReference;
  switch (a.currency) {
    case 'USD':
      return {
        accountType: 'USD_ACCOUNT',
        accountNumber: '9' + digits(seq, 11, 3_141_592_653n, 271_828n),
        routingNumber: SANDBOX_ROUTING_NUMBER,
        paymentRails: ['ACH', 'WIRE'],
        bankName: SANDBOX_BANK_NAME,
        reference,
      };
    case 'EUR':
      return {
        accountType: 'EUR_ACCOUNT',
        iban: germanIban(SANDBOX_BLZ, digits(seq, 10, 2_718_281_829n, 31_415n)),
        swiftCode: SANDBOX_SWIFT,
        paymentRails: ['SEPA', 'SEPA_INSTANT'],
        reference,
      };
    case 'GBP':
      return {
        accountType: 'GBP_ACCOUNT',
        sortCode: SANDBOX_SORT_CODE,
        accountNumber: digits(seq, 8, 1_618_033_989n, 16_180n),
        paymentRails: ['FASTER_PAYMENTS'],
        reference,
      };
    case 'MXN':
      return {
        accountType: 'MXN_ACCOUNT',
        clabeNumber: clabe(
          SANDBOX_CLABE_BANK + SANDBOX_CLABE_PLAZA + digits(seq, 11, 1_414_213_563n, 14_142n),
        ),
        paymentRails: ['SPEI'],
        reference,
      };
    case 'BRL':
      return { accountType: 'BRL_ACCOUNT', qrCode: pixPayload(pixKey(a.id), reference) };
    case 'CAD':
      return {
        accountType: 'CAD_ACCOUNT',
        bankCode: SANDBOX_CAD_BANK,
        branchCode: SANDBOX_CAD_BRANCH,
        accountNumber: digits(seq, 12, 1_732_050_807n, 17_320n),
        paymentRails: ['BANK_TRANSFER'],
        reference,
      };
    case 'INR':
      return { accountType: 'INR_ACCOUNT', vpa: `${reference.toLowerCase()}@sluice`, paymentRails: ['UPI'] };
    case 'NGN':
      return {
        accountType: 'NGN_ACCOUNT',
        accountNumber: digits(seq, 10, 2_236_067_977n, 22_360n),
        bankName: SANDBOX_BANK_NAME,
        paymentRails: ['BANK_TRANSFER'],
        reference,
      };
    case 'PHP':
      return {
        accountType: 'PHP_ACCOUNT',
        bankName: SANDBOX_BANK_NAME,
        accountNumber: digits(seq, 12, 2_645_751_311n, 26_457n),
        paymentRails: ['BANK_TRANSFER'],
        reference,
      };
    case 'USDC':
      return { accountType: 'SOLANA_WALLET', address: base58(hash(`solana:${a.id}`)), assetType: 'USDC' };
    case 'USDT':
      return {
        accountType: 'TRON_WALLET',
        address: tronAddress(hash(`tron:${a.id}`).subarray(0, 20)),
        assetType: 'USDT',
      };
    case 'BTC':
      return { accountType: 'SPARK_WALLET', address: sparkAddress(hash(`spark:${a.id}`)), assetType: 'BTC' };
    default:
      return undefined; // e.g. JPY: the public API has no JPY account type
  }
}

// ---------------------------------------------------------------------------
// Unique, stable numbers derived from the funding sequence number.

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TWO_POW_40 = 1n << 40n;

/**
 * The funding reference of the account with funding sequence number `seq`:
 * `SLU` + 8 Crockford base32 characters of a bijection of `seq` on 40 bits, so
 * references are unique (for seq < 2^40) without looking sequential.
 */
export function fundingReference(seq: bigint): string {
  if (seq < 0n || seq >= TWO_POW_40) throw new Error(`funding sequence out of range: ${seq}`);
  // Multiplying by an odd constant modulo 2^40 and xoring a constant are both bijections.
  let x = ((seq * 0x9e3779b97fn) % TWO_POW_40) ^ 0x5a5a5a5a5an;
  let out = '';
  for (let i = 0; i < 8; i++) {
    out = CROCKFORD[Number(x & 31n)] + out;
    x >>= 5n;
  }
  return `SLU${out}`;
}

/**
 * `n` decimal digits from `seq` through an affine bijection of Z/10^n
 * (`a` coprime with 10): distinct sequence numbers below 10^n give distinct digits.
 */
export function digits(seq: bigint, n: number, a: bigint, b: bigint): string {
  const mod = 10n ** BigInt(n);
  return ((((a * seq + b) % mod) + mod) % mod).toString().padStart(n, '0');
}

/** A German IBAN (DE + check digits + 8-digit bank code + 10-digit account) with valid ISO 7064 check digits. */
export function germanIban(blz: string, account: string): string {
  const bban = blz + account;
  return `DE${ibanCheckDigits('DE', bban)}${bban}`;
}

export function ibanCheckDigits(country: string, bban: string): string {
  const rearranged = (bban + country + '00').replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  return String(98n - (BigInt(rearranged) % 97n)).padStart(2, '0');
}

/** True when the IBAN's check digits are valid (mod 97 = 1). */
export function isValidIban(iban: string): boolean {
  const rearranged = (iban.slice(4) + iban.slice(0, 4)).replace(/[A-Z]/g, (c) =>
    String(c.charCodeAt(0) - 55),
  );
  return BigInt(rearranged) % 97n === 1n;
}

/** Appends the CLABE control digit (weights 3, 7, 1) to 17 digits. */
export function clabe(first17: string): string {
  const weights = [3, 7, 1];
  const sum = [...first17].reduce((s, d, i) => s + ((Number(d) * weights[i % 3]!) % 10), 0);
  return first17 + String((10 - (sum % 10)) % 10);
}

/** True when the 9-digit ABA routing number has a valid checksum. */
export function isValidAbaRouting(n: string): boolean {
  if (!/^\d{9}$/.test(n)) return false;
  const d = [...n].map(Number);
  return (3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!)) % 10 === 0;
}

// ---------------------------------------------------------------------------
// PIX (Brazil) static BR Code with the account's reference as transaction id (pixPayload: @sluice/core).

function pixKey(accountId: string): string {
  const h = hash(`pix:${accountId}`).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

// ---------------------------------------------------------------------------
// Wallet addresses (well-formed, derived from the account id; sandbox only).

function hash(s: string): Buffer {
  return createHash('sha256').update(`sluice-sandbox:${s}`).digest();
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function base58(bytes: Uint8Array): string {
  let x = BigInt('0x' + (Buffer.from(bytes).toString('hex') || '0'));
  let out = '';
  while (x > 0n) {
    out = BASE58[Number(x % 58n)] + out;
    x /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

/** Base58Check of 0x41 + a 20-byte account (a `T...` Tron address). */
export function tronAddress(account20: Uint8Array): string {
  const payload = Buffer.concat([Buffer.from([0x41]), Buffer.from(account20)]);
  const check = createHash('sha256')
    .update(createHash('sha256').update(payload).digest())
    .digest()
    .subarray(0, 4);
  return base58(Buffer.concat([payload, check]));
}

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function bech32Polymod(values: number[]): number {
  const gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= gen[i]!;
  }
  return chk >>> 0;
}

/** bech32m encoding (BIP 350) of bytes under a human-readable part. */
export function bech32m(hrp: string, bytes: Uint8Array): string {
  const data: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = ((acc << 8) | b) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      data.push((acc >>> bits) & 31);
    }
  }
  if (bits > 0) data.push((acc << (5 - bits)) & 31);
  const hrpExpanded = [...hrp]
    .map((c) => c.charCodeAt(0) >> 5)
    .concat(
      [0],
      [...hrp].map((c) => c.charCodeAt(0) & 31),
    );
  const polymod = bech32Polymod([...hrpExpanded, ...data, 0, 0, 0, 0, 0, 0]) ^ 0x2bc830a3;
  const checksum = [0, 1, 2, 3, 4, 5].map((i) => (polymod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...data, ...checksum].map((d) => BECH32[d]).join('')}`;
}

/** A Spark address: bech32m("spark", protobuf field 1 = a 33-byte compressed public key). */
export function sparkAddress(seed32: Uint8Array): string {
  return bech32m('spark', Buffer.concat([Buffer.from([0x0a, 0x21, 0x02]), Buffer.from(seed32)]));
}
