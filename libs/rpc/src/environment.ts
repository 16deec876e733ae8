import { common } from '@sluice/contracts';
import type { Environment } from '@sluice/core';

/** The environment of a request; undefined for ENVIRONMENT_UNSPECIFIED (a request rule refuses it). */
export function environmentFromPb(e: common.Environment | undefined): Environment | undefined {
  return e === common.Environment.SANDBOX ? 'SANDBOX' : e === common.Environment.PRODUCTION ? 'PRODUCTION' : undefined;
}

export function environmentToPb(e: Environment): common.Environment {
  return e === 'SANDBOX' ? common.Environment.SANDBOX : common.Environment.PRODUCTION;
}
