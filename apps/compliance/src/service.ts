import { Type } from '@sluice/config';
import { implement } from '@sluice/rpc';
import { compliance } from '@sluice/contracts';
import { defineService } from '@sluice/runtime';
import { migrations } from './store/migrations.js';

const config = Type.Object({});

/** The compliance service: KYC/KYB verifications, beneficial owners and documents. Later issues add its API; today it serves health. */
export const complianceService = defineService({
  name: 'compliance',
  schema: 'compliance',
  domain: 'compliance',
  config,
  migrations,
  compose: ({ logger }) => ({
    rpc: [
      implement<compliance.ComplianceServiceServer>(
        compliance.ComplianceServiceService,
        {},
        logger,
        'sluice.compliance.v1.ComplianceService',
      ),
    ],
  }),
});
