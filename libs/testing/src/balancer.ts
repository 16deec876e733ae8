/**
 * A TCP forwarder on loopback, in two roles:
 *
 * - the local stand-in for a Kubernetes Service in front of the gateway replicas: each new
 *   connection goes to the next replica in rotation (round robin) and the bytes are piped
 *   both ways. A replica taken out of rotation (`remove`, as an endpoint leaves a Service
 *   when its pod terminates) gets no new connection; the connections it has live on until
 *   it closes them, as they would behind kube-proxy;
 * - the network between the services and Postgres or NATS in the resilience tests:
 *   `interrupt()` cuts every connection and refuses new ones (the server is gone, as in a
 *   restart of it), `restore()` lets them through again, without touching the real server
 *   that other test files share.
 *
 * It does not parse what it carries.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Balancer {
  port: number;
  /** Replica ports in rotation, in order. */
  readonly targets: readonly number[];
  add(port: number): void;
  remove(port: number): void;
  /** Resets every open connection and every new one until `restore()`. */
  interrupt(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startBalancer(o: { host: string; port: number; targets: number[] }): Promise<Balancer> {
  const targets = [...o.targets];
  let next = 0;
  const open = new Set<Socket>();
  let interrupted = false;
  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    if (targets.length === 0 || interrupted) {
      client.resetAndDestroy();
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
    interrupt() {
      interrupted = true;
      for (const s of open) s.resetAndDestroy();
    },
    restore() {
      interrupted = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The link between one client and the server at `url` (a loopback Postgres or NATS URL): a
 * forwarder in front of the server's port, and `url` rewritten to reach the server through it, so
 * a test can cut that client off (`link.interrupt()`) without touching the shared server.
 */
export async function cuttableLink(url: string, defaultPort: number): Promise<{ url: string; link: Balancer }> {
  const u = new URL(url);
  const link = await startBalancer({ host: '127.0.0.1', port: 0, targets: [Number(u.port || defaultPort)] });
  u.hostname = '127.0.0.1';
  u.port = String(link.port);
  return { url: u.toString(), link };
}
