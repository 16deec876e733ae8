/**
 * What sealing a transaction's counterpartyIdentifier adds to its hot path (issue 17): the cost of
 * one seal (each transaction insert) and one open (each read of a transaction row), measured on the
 * functions payments' row mapper calls, in process, with a random master key. And what a UMA
 * address adds to a payment that has one: its seal with its blind index at the insert
 * (`umaSealAndIndex`), its open at each read (`umaOpen`), and the indexes GET /transactions
 * computes to filter on an address, under one key and during a rotation (two). A micro-benchmark
 * printed, not an assertion: `node --import tsx tools/bench/sealing.ts [iterations]`.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { loadMasterKeyring } from '@sluice/crypto';
import {
  openCounterpartyIdentifier,
  openUmaAddress,
  PAYMENTS_KEYRING,
  sealCounterpartyIdentifier,
  sealTransactionUmaAddresses,
  transactionUmaAddressIndexes,
} from '../../apps/payments/src/store/sealing.js';

const iterations = Number(process.argv[2] ?? 20_000);
const keyring = loadMasterKeyring(randomBytes(32).toString('base64'), undefined, PAYMENTS_KEYRING);
const IBAN = 'DE89370400440532013000';
const ids = Array.from({ length: 64 }, (_, i) => `Transaction:019a0000-0000-7000-8000-${String(i).padStart(12, '0')}`);

/** Mean µs per call of `fn` over `n` calls (after a warm-up of n / 10). */
function time(n: number, fn: (i: number) => void): number {
  for (let i = 0; i < n / 10; i++) fn(i);
  const start = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return ((performance.now() - start) * 1000) / n;
}

const sealed = ids.map((id) => sealCounterpartyIdentifier(keyring, id, IBAN).sealed_counterparty_identifier!);
const seal = time(iterations, (i) => sealCounterpartyIdentifier(keyring, ids[i % ids.length]!, IBAN));
const open = time(iterations, (i) => {
  const k = i % ids.length;
  if (openCounterpartyIdentifier(keyring, ids[k]!, sealed[k], null) !== IBAN) throw new Error('opened another value');
});
const both = time(iterations, (i) => {
  const id = ids[i % ids.length]!;
  openCounterpartyIdentifier(keyring, id, sealCounterpartyIdentifier(keyring, id, IBAN).sealed_counterparty_identifier, null);
});
const UMA = '$alice.remittances@bank.example';
const umaSealed = ids.map((id) => sealTransactionUmaAddresses(keyring, id, UMA, undefined).sealed_source_uma_address!);
const umaSealAndIndex = time(iterations, (i) => sealTransactionUmaAddresses(keyring, ids[i % ids.length]!, UMA, undefined));
const umaOpen = time(iterations, (i) => {
  const k = i % ids.length;
  if (openUmaAddress(keyring, 'transactionSource', ids[k]!, umaSealed[k], null) !== UMA) throw new Error('opened another value');
});
const rotating = loadMasterKeyring(randomBytes(32).toString('base64'), randomBytes(32).toString('base64'), PAYMENTS_KEYRING);
const filterIndexes = time(iterations, () => transactionUmaAddressIndexes(keyring, 'source', UMA));
const filterIndexesRotating = time(iterations, () => transactionUmaAddressIndexes(rotating, 'source', UMA));
const f = (us: number) => `${us.toFixed(1)} µs`;
console.log(
  JSON.stringify({
    iterations,
    node: process.version,
    sealedLength: sealed[0]!.length,
    seal: f(seal),
    open: f(open),
    sealThenOpen: f(both),
    umaSealAndIndex: f(umaSealAndIndex),
    umaOpen: f(umaOpen),
    filterIndexes: f(filterIndexes),
    filterIndexesRotating: f(filterIndexesRotating),
  }),
);
