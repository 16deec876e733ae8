import {
  credentials,
  makeGenericClientConstructor,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

type HealthStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

interface HealthClient {
  Check(
    request: { service: string },
    options: { deadline: Date },
    callback: (err: ServiceError | null, res?: { status: HealthStatus }) => void,
  ): void;
  close(): void;
}

const HealthClientCtor = makeGenericClientConstructor(
  healthService as unknown as ServiceDefinition,
  'grpc.health.v1.Health',
);

/** One grpc.health.v1 Check against `address` (host:port); resolves with the status or the error text. */
export function checkGrpcHealth(
  address: string,
  timeoutMs = 1000,
  service = '',
): Promise<{ status: HealthStatus } | { error: string }> {
  const client = new HealthClientCtor(address, credentials.createInsecure()) as unknown as HealthClient;
  return new Promise((resolve) => {
    client.Check({ service }, { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => {
      client.close();
      resolve(err ? { error: err.details || err.message } : { status: res?.status ?? 'UNKNOWN' });
    });
  });
}

/** `GET url`; true on a 2xx answer. */
export async function checkHttp(url: string, timeoutMs = 1000): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}
