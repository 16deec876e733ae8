/**
 * The local stand-in for a Kubernetes Service in front of the gateway replicas: a TCP
 * balancer on the public port that hands each new connection to the next replica in
 * rotation (round robin) and pipes the bytes both ways. A replica taken out of rotation
 * (`remove`, as an endpoint leaves a Service when its pod terminates) gets no new
 * connection; the connections it has live on until it closes them, as they would behind
 * kube-proxy. Loopback only; it does not parse HTTP.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Balancer {
  port: number;
  /** Replica ports in rotation, in order. */
  readonly targets: readonly number[];
  add(port: number): void;
  remove(port: number): void;
  close(): Promise<void>;
}

export async function startBalancer(o: { host: string; port: number; targets: number[] }): Promise<Balancer> {
  const targets = [...o.targets];
  let next = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    if (targets.length === 0) {
      client.destroy();
      return;
    }
    const port = targets[next++ % targets.length]!;
    const upstream = connect({ host: '127.0.0.1', port });
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    client.pipe(upstream);
    upstream.pipe(client);
    // A reset on either side resets the other (the client sees what it would see from the replica).
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : o.port,
    targets,
    add(port) {
      if (!targets.includes(port)) targets.push(port);
    },
    remove(port) {
      const i = targets.indexOf(port);
      if (i >= 0) targets.splice(i, 1);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
