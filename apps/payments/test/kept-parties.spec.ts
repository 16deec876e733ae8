import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common, payments as pb } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { sumOf } from '@sluice/metrics';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import { startService, type RunningService } from '@sluice/runtime';
import { eventually, rejection, TEST_MASTER_KEYS, type World, type WorldPlatform } from '@sluice/testing';
import { paymentsService, type PaymentsConfig, type PaymentsGraph } from '../src/index.js';
import { accountInfoFor, Holders, startPaymentsWithNeighbours } from './support/neighbours.js';

// Payments keeps each customer's platformCustomerId instead of asking identity's GetCustomer on
// every quote, and forgets it when identity's CUSTOMER.DELETED reaches it — on every replica; the
// same for a quote's external destination and accounts' EXTERNAL_ACCOUNT.DELETED. Two payments
// replicas on one database and subject prefix, beside the real identity, accounts and wallet-auth;
// identity's and accounts' calls are counted by their own gRPC metrics.

let stack: Awaited<ReturnType<typeof startPaymentsWithNeighbours>>;
let world: World;
let P: WorldPlatform;
/** The second payments replica and its client. */
let second: RunningService<PaymentsConfig, PaymentsGraph>;
let secondClient: PromiseClient<pb.PaymentsServiceClient>;

const holders = new Holders(
  () => world,
  () => P,
);

/** GetCustomer calls identity has answered so far (started, whatever their outcome). */
const getCustomerCalls = async () =>
  sumOf(await stack.services.running.identity.deps.metrics.samples(), 'grpc_server_started_total', {
    grpc_method: 'GetCustomer',
  });

/** How many GetCustomer calls `run` made identity answer. */
async function callsDuring(run: () => Promise<unknown>): Promise<number> {
  const before = await getCustomerCalls();
  await run();
  return (await getCustomerCalls()) - before;
}

/** How many GetExternalAccount calls `run` made accounts answer. */
async function externalReadsDuring(run: () => Promise<unknown>): Promise<number> {
  const calls = async () =>
    sumOf(await stack.services.running.accounts.deps.metrics.samples(), 'grpc_server_started_total', {
      grpc_method: 'GetExternalAccount',
    });
  const before = await calls();
  await run();
  return (await calls()) - before;
}

/** A customer with a funded USD internal account and an EUR external account: what a quote of theirs pays from and to. */
async function payer() {
  const source = await holders.internal('USD');
  const customerId = holders.ownerOf.get(source)!;
  const destination = (await world.externalAccount(P, customerId, 'EUR', accountInfoFor('EUR'))).id;
  return { customerId, source, destination };
}

const quoteRequest = (p: { source: string; destination: string }): pb.CreateQuoteRequest => ({
  platformId: P.id,
  environment: common.Environment.SANDBOX,
  sourceKind: 'ACCOUNT',
  sourceAccountId: p.source,
  destinationKind: 'ACCOUNT',
  destinationAccountId: p.destination,
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: 10_000n,
  immediatelyExecute: false,
  senderCustomerInfoJson: '',
});

/** The two replicas: their clients and graphs. */
const replicas = () => [
  { name: 'first', client: stack.client, graph: stack.running.graph as PaymentsGraph },
  { name: 'second', client: secondClient, graph: second.graph },
];

/** A quote on `client` and its transaction's platformCustomerId. */
async function quote(client: PromiseClient<pb.PaymentsServiceClient>, p: { source: string; destination: string }) {
  const { quote: q } = await client.createQuote(quoteRequest(p));
  const { transaction } = await client.getTransaction({ platformId: P.id, transactionId: q!.transactionId! });
  return transaction!.platformCustomerId;
}

beforeAll(async () => {
  stack = await startPaymentsWithNeighbours('customer-ids');
  ({ world } = stack);
  const { services } = stack;
  second = (await startService(paymentsService, {
    DATABASE_URL: services.db.url,
    NATS_URL: services.natsUrl,
    EVENT_SUBJECT_PREFIX: services.prefix,
    GRPC_PORT: '0',
    GRPC_HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_POOL_MAX: '10',
    SANDBOX_UMA_DOMAIN: 'sandbox.sluice.local',
    IDENTITY_GRPC_URL: services.address('identity'),
    ACCOUNTS_GRPC_URL: services.address('accounts'),
    WALLET_AUTH_GRPC_URL: services.address('wallet-auth'),
    ...TEST_MASTER_KEYS,
  })) as RunningService<PaymentsConfig, PaymentsGraph>;
  secondClient = createRpcClient(pb.PaymentsServiceClient, `127.0.0.1:${second.port}`, { defaultDeadlineMs: 10_000 });
  P = await world.platform('SANDBOX');
});

afterAll(async () => {
  secondClient?.close();
  await second?.stop();
  await stack?.stop();
});

describe("a customer's platformCustomerId, kept by each payments replica", () => {
  it('is asked of identity once per replica: the next quotes of the customer make no GetCustomer call', async () => {
    const p = await payer();
    const expected = holders.platformCustomerIdOf.get(p.customerId);
    for (const { client } of replicas()) {
      let first: string | undefined;
      expect(await callsDuring(async () => (first = await quote(client, p)))).toBe(1);
      expect(first).toBe(expected);
      let next: string | undefined;
      expect(await callsDuring(async () => (next = await quote(client, p)))).toBe(0);
      expect(next).toBe(expected);
    }
  });

  it('a customer deleted in identity is refused on every replica once its CUSTOMER.DELETED arrived, as an unknown customer is', async () => {
    // What an unknown customer gets (identity's answer, passed through).
    const unknown = await rejection(
      stack.client.createQuote({
        ...quoteRequest(await payer()),
        sourceKind: 'REALTIME_FUNDING',
        sourceAccountId: '',
        sourceCurrency: 'USD',
        sourceCustomerId: newId('Customer'),
      }),
    );
    expect(unknown.code).toBe('CUSTOMER_NOT_FOUND');

    const p = await payer();
    for (const { client } of replicas()) {
      await quote(client, p);
      expect(await callsDuring(() => quote(client, p))).toBe(0); // kept
    }
    await stack.identity.deleteCustomer({ platformId: P.id, customerId: p.customerId });
    for (const { name, client } of replicas()) {
      // Within 10 s, long before an entry's 60 s maximum age: the event did it.
      const refused = await eventually(async () => {
        const e = await rejection(client.createQuote(quoteRequest(p)));
        return e;
      });
      expect(refused.code, name).toBe(unknown.code);
      expect(refused.kind, name).toBe(unknown.kind);
      // And it stays refused: a refusal is not kept, identity is asked each time.
      expect(await callsDuring(() => rejection(client.createQuote(quoteRequest(p))))).toBe(1);
    }
    // A real-time-funded quote of the deleted customer too.
    const e = await rejection(
      secondClient.createQuote({
        ...quoteRequest(p),
        sourceKind: 'REALTIME_FUNDING',
        sourceAccountId: '',
        sourceCurrency: 'USD',
        sourceCustomerId: p.customerId,
      }),
    );
    expect(e.code).toBe('CUSTOMER_NOT_FOUND');
  });

  it('while the subscription is not live every quote asks identity; once it is again, the first asks and the next do not', async () => {
    const p = await payer();
    const { client, graph } = replicas()[0]!;
    const { fanout, directory } = graph.keptParties;
    await quote(client, p);
    expect(await callsDuring(() => quote(client, p))).toBe(0);

    await fanout.stop();
    expect(fanout.live).toBe(false);
    expect(directory.kept.size).toBe(0);
    expect(await callsDuring(() => quote(client, p))).toBe(1);
    expect(await callsDuring(() => quote(client, p))).toBe(1);
    expect(directory.kept.size).toBe(0); // nothing kept while not live

    await fanout.start();
    expect(fanout.live).toBe(true);
    expect(await callsDuring(() => quote(client, p))).toBe(1);
    expect(await callsDuring(() => quote(client, p))).toBe(0);
  });

  it('a NATS reconnection forgets everything (events published meanwhile did not come): the next quote asks identity', async () => {
    const p = await payer();
    const { client, graph } = replicas()[1]!;
    const { fanout } = graph.keptParties;
    await quote(client, p);
    expect(await callsDuring(() => quote(client, p))).toBe(0);

    const before = fanout.timesLive;
    await second.deps.bus.nc.reconnect();
    await eventually(async () => fanout.live && fanout.timesLive > before);
    expect(await callsDuring(() => quote(client, p))).toBe(1);
    expect(await callsDuring(() => quote(client, p))).toBe(0);
  });

  it('a customer deleted while a replica was not listening is refused by it as soon as it listens again', async () => {
    const p = await payer();
    const [first, other] = replicas();
    const { fanout } = first!.graph.keptParties;
    await quote(first!.client, p);
    await fanout.stop();
    await stack.identity.deleteCustomer({ platformId: P.id, customerId: p.customerId });
    // The event went out (the other replica heard it) while the first was not subscribed.
    await eventually(async () => (await rejection(other!.client.createQuote(quoteRequest(p)))).code === 'CUSTOMER_NOT_FOUND');
    await fanout.start();
    expect((await rejection(first!.client.createQuote(quoteRequest(p)))).code).toBe('CUSTOMER_NOT_FOUND');
  });
});

describe("a quote's external destination, kept by each payments replica", () => {
  it('is asked of accounts once per replica; once EXTERNAL_ACCOUNT.DELETED arrived every replica refuses it as accounts does', async () => {
    const p = await payer();
    for (const { client } of replicas()) {
      expect(await externalReadsDuring(() => quote(client, p))).toBe(1);
      expect(await externalReadsDuring(() => quote(client, p))).toBe(0);
    }
    // A quote created from the kept copy still executes: the hold's own read of the destination.
    const { quote: kept } = await stack.client.createQuote(quoteRequest(p));
    const { quote: executed } = await stack.client.executeQuote({ platformId: P.id, environment: common.Environment.SANDBOX, quoteId: kept!.id });
    expect(executed!.status).not.toBe('PENDING');

    const { quote: beforeDeletion } = await secondClient.createQuote(quoteRequest(p));
    await stack.accounts.deleteExternalAccount({ platformId: P.id, accountId: p.destination });
    // What accounts answers for a deleted account, through an uncached read (a receiver lookup).
    const fromAccounts = await rejection(stack.accounts.getExternalAccount({ platformId: P.id, accountId: p.destination }));
    for (const { name, client } of replicas()) {
      // Within 10 s, long before an entry's 60 s maximum age: the event did it.
      const refused = await eventually(async () => rejection(client.createQuote(quoteRequest(p))));
      expect(refused.code, name).toBe(fromAccounts.code);
      // A refusal is not kept: accounts is asked each time.
      expect(await externalReadsDuring(() => rejection(client.createQuote(quoteRequest(p))))).toBe(1);
    }
    // A quote made before the deletion is not paid: its execute's hold reads the destination again.
    const e = await rejection(
      secondClient.executeQuote({ platformId: P.id, environment: common.Environment.SANDBOX, quoteId: beforeDeletion!.id }),
    );
    expect(e.code).toBe(fromAccounts.code);
  });

  it('a NATS gap forgets the kept destinations too', async () => {
    const p = await payer();
    const { client, graph } = replicas()[0]!;
    const { fanout, externalAccounts } = graph.keptParties;
    await quote(client, p);
    expect(externalAccounts.kept.size).toBeGreaterThan(0);
    await fanout.stop();
    expect(externalAccounts.kept.size).toBe(0);
    expect(await externalReadsDuring(() => quote(client, p))).toBe(1);
    expect(await externalReadsDuring(() => quote(client, p))).toBe(1);
    await fanout.start();
    expect(await externalReadsDuring(() => quote(client, p))).toBe(1);
    expect(await externalReadsDuring(() => quote(client, p))).toBe(0);
  });
});
