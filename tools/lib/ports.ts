/**
 * Ports of the stack's children: choosing a free one, probing one, and telling
 * whether the process listening on one is a given child (Linux /proc).
 *
 * A port chosen by binding port 0 and closing is free only at that moment: any
 * process may bind it (or use it as the local port of an outgoing connection)
 * before the child that was told to use it binds it. tools/stack.ts therefore
 * checks that the server answering on a child's port is that child, and starts
 * an app whose chosen port was taken again on a fresh one.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';

/** A port that is free on `host` right now (the kernel's choice for port 0), not one of `avoid`. */
export async function pickFreePort(host = '127.0.0.1', avoid: ReadonlySet<number> = new Set()): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.unref();
      srv.once('error', reject);
      srv.listen(0, host, () => {
        const addr = srv.address();
        srv.close(() =>
          typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port')),
        );
      });
    });
    if (!avoid.has(port)) return port;
  }
}

/** True when a server could listen on host:port now (false on EADDRINUSE). */
export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', (e: NodeJS.ErrnoException) =>
      e.code === 'EADDRINUSE' ? resolve(false) : reject(e),
    );
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/**
 * Who listens on TCP `port` (any local address), as far as process `pid` is concerned:
 * `ours` when one of the listening sockets is an open file of `pid`, `other` when
 * sockets listen on it and none is `pid`'s, `none` when nothing listens on it, and
 * `unknown` where /proc cannot tell (not Linux).
 */
export function listenerOf(port: number, pid: number | undefined): 'ours' | 'other' | 'none' | 'unknown' {
  const inodes = new Set<string>();
  let readable = false;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    readable = true;
    // "  sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when retrnsmt   uid  timeout inode"
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = f[1]!;
      const state = f[3]!;
      if (state === '0A' && parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port) inodes.add(f[9]!);
    }
  }
  if (!readable) return 'unknown';
  if (inodes.size === 0) return 'none';
  if (pid === undefined) return 'other';
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return 'other'; // the process is gone: whatever listens is someone else
  }
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m && inodes.has(m[1]!)) return 'ours';
  }
  return 'other';
}
