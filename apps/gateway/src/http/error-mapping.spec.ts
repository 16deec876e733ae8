import { describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { DomainError, invalidInput } from '@sluice/core';
import { RpcError } from '@sluice/rpc';
import { GRPC_STATUS_TO_HTTP, httpStatusForGrpc, mapServiceError } from './error-mapping.js';

describe('gRPC status → HTTP', () => {
  it('is the documented table', () => {
    expect(GRPC_STATUS_TO_HTTP).toEqual({
      INVALID_ARGUMENT: 400,
      OUT_OF_RANGE: 400,
      FAILED_PRECONDITION: 400,
      UNAUTHENTICATED: 401,
      PERMISSION_DENIED: 403,
      NOT_FOUND: 404,
      ALREADY_EXISTS: 409,
      ABORTED: 409,
      RESOURCE_EXHAUSTED: 429,
      UNIMPLEMENTED: 501,
      UNAVAILABLE: 503,
      DEADLINE_EXCEEDED: 503,
    });
  });

  it('takes numeric codes as grpc-js reports them; anything else is 500', () => {
    expect(httpStatusForGrpc(status.NOT_FOUND)).toBe(404);
    expect(httpStatusForGrpc(status.DEADLINE_EXCEEDED)).toBe(503);
    for (const s of [status.UNKNOWN, status.INTERNAL, status.DATA_LOSS, status.CANCELLED, 99])
      expect(httpStatusForGrpc(s)).toBe(500);
  });

  it('keeps a domain error public code, message and details', () => {
    expect(mapServiceError(invalidInput([{ field: 'email', message: 'is invalid' }]))).toEqual({
      status: 400,
      code: 'INVALID_INPUT',
      message: 'email: is invalid',
      details: { errors: [{ field: 'email', message: 'is invalid' }] },
    });
    expect(mapServiceError(new DomainError('NOT_FOUND', 'CUSTOMER_NOT_FOUND', 'Customer not found'))).toEqual(
      {
        status: 404,
        code: 'CUSTOMER_NOT_FOUND',
        message: 'Customer not found',
      },
    );
  });

  it('never passes on the text of a transport failure', () => {
    expect(mapServiceError(new RpcError(status.UNAVAILABLE, 'connect ECONNREFUSED 10.1.2.3:50051'))).toEqual({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'The service is temporarily unavailable; retry later',
    });
    expect(mapServiceError(new RpcError(status.UNIMPLEMENTED, 'method Foo not found'))).toMatchObject({
      status: 501,
      code: 'NOT_IMPLEMENTED',
    });
    expect(mapServiceError(new RpcError(status.INTERNAL, 'stack trace...'))).toMatchObject({
      status: 500,
      code: 'INTERNAL_ERROR',
      message: 'An internal error occurred',
    });
    expect(mapServiceError(new Error('boom'))).toBeUndefined();
  });
});
