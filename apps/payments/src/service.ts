import { Type } from '@sluice/config';
import { implement } from '@sluice/rpc';
import { payments } from '@sluice/contracts';
import type { ServiceSpec } from '@sluice/runtime';
import { migrations } from './store/migrations.js';

const config = Type.Object({});

/** The payments service: rates, quotes, transactions, transfers and payment rails. Later issues add its API; today it serves health. */
export const paymentsService: ServiceSpec<typeof config> = {
  name: 'payments',
  schema: 'payments',
  domain: 'payments',
  config,
  entities: [],
  migrations,
  rpc: ({ logger }) => [
    implement<payments.PaymentsServiceServer>(payments.PaymentsServiceService, {}, logger, 'sluice.payments.v1.PaymentsService'),
  ],
};
