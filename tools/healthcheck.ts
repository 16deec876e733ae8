/**
 * Container health check, bundled into every image as `healthcheck.mjs`
 * (Docker HEALTHCHECK / compose). The gateway: GET /healthz on its HTTP port;
 * a backend: grpc.health.v1 Check on its gRPC port. Exit 0 when healthy.
 * Kubernetes uses its native grpc/http probes instead.
 */
import { SERVICE_PORTS, type ServiceName } from '@sluice/config';
import { checkGrpcHealth, checkHttp } from './lib/health.js';

declare const __SLUICE_APP__: string | undefined;
const app = typeof __SLUICE_APP__ === 'string' ? __SLUICE_APP__ : (process.argv[2] ?? '');

async function healthy(): Promise<boolean> {
  if (app === 'gateway')
    return checkHttp(`http://127.0.0.1:${process.env.GATEWAY_PORT || 8080}/healthz`, 3000);
  const port = process.env.GRPC_PORT || SERVICE_PORTS[app as ServiceName];
  if (!port) throw new Error(`unknown app ${JSON.stringify(app)}`);
  const r = await checkGrpcHealth(`127.0.0.1:${port}`, 3000);
  return 'status' in r && r.status === 'SERVING';
}

healthy().then(
  (ok) => process.exit(ok ? 0 : 1),
  (err: unknown) => {
    process.stderr.write(`healthcheck: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
