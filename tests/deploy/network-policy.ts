/**
 * Evaluates Kubernetes NetworkPolicies (networking.k8s.io/v1) for one connection, as the API
 * documents them: a pod is isolated for a direction once any policy with that policy type selects
 * it, and then a connection is allowed when any rule of any such policy allows it; a connection
 * between two pods needs the source's egress and the destination's ingress. Only what deploy/k8s
 * uses is implemented (matchLabels, namespaceSelector, ipBlock with except, numeric and named
 * ports); anything else throws, so a policy change the evaluator does not understand fails the test.
 */
import type { Doc } from './kustomize.js';

/** A pod, or an address outside the cluster (an `ip`, no labels). */
export interface Endpoint {
  namespace?: string;
  /** The namespace's labels (kubernetes.io/metadata.name is added). */
  namespaceLabels?: Record<string, string>;
  labels?: Record<string, string>;
  ip?: string;
}

/** A destination port: its number, the container port's name if any, and the protocol. */
export interface Port {
  port: number;
  name?: string;
  protocol?: 'TCP' | 'UDP';
}

function matchLabels(selector: Doc | undefined, labels: Record<string, string> | undefined): boolean {
  for (const k of Object.keys(selector ?? {}))
    if (k !== 'matchLabels') throw new Error(`selector field ${k} is not supported by tests/deploy/network-policy.ts`);
  return Object.entries((selector?.matchLabels ?? {}) as Record<string, string>).every(([k, v]) => labels?.[k] === v);
}

function ipv4(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new Error(`not an IPv4 address: ${ip}`);
  return parts.reduce((a, p) => a * 256 + p, 0);
}

function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(ip) / size) === Math.floor(ipv4(base!) / size);
}

function namespaceLabels(e: Endpoint): Record<string, string> {
  return { ...e.namespaceLabels, 'kubernetes.io/metadata.name': e.namespace ?? '' };
}

/** Whether `peer` is one of a rule's peers (`from` or `to`; absent: everyone). */
function peerMatches(peers: Doc[] | undefined, peer: Endpoint, policyNamespace: string): boolean {
  if (peers === undefined) return true;
  return peers.some((p) => {
    for (const k of Object.keys(p))
      if (!['podSelector', 'namespaceSelector', 'ipBlock'].includes(k)) throw new Error(`peer field ${k} is not supported`);
    if (p.ipBlock) {
      if (!peer.ip) return false;
      return inCidr(peer.ip, p.ipBlock.cidr) && !((p.ipBlock.except ?? []) as string[]).some((c) => inCidr(peer.ip!, c));
    }
    if (peer.ip || peer.namespace === undefined) return false;
    const nsOk = p.namespaceSelector
      ? matchLabels(p.namespaceSelector, namespaceLabels(peer))
      : peer.namespace === policyNamespace;
    const podOk = p.podSelector ? matchLabels(p.podSelector, peer.labels) : true;
    return nsOk && podOk;
  });
}

function portMatches(ports: Doc[] | undefined, port: Port): boolean {
  if (ports === undefined) return true;
  return ports.some((p) => {
    if (p.endPort !== undefined) throw new Error('endPort is not supported');
    const protocolOk = (p.protocol ?? 'TCP') === (port.protocol ?? 'TCP');
    const portOk = p.port === undefined || p.port === port.port || (port.name !== undefined && p.port === port.name);
    return protocolOk && portOk;
  });
}

function policyTypes(policy: Doc): string[] {
  return (policy.spec.policyTypes as string[] | undefined) ?? ['Ingress', ...(policy.spec.egress ? ['Egress'] : [])];
}

/** Whether `direction` traffic of `pod` with `peer` on `port` is allowed by `policies` (all the cluster's). */
function allows(policies: Doc[], direction: 'Ingress' | 'Egress', pod: Endpoint, peer: Endpoint, port: Port): boolean {
  const selecting = policies.filter(
    (p) =>
      p.kind === 'NetworkPolicy' &&
      (p.metadata.namespace ?? '') === (pod.namespace ?? '') &&
      policyTypes(p).includes(direction) &&
      matchLabels(p.spec.podSelector, pod.labels),
  );
  if (selecting.length === 0) return true;
  const key = direction === 'Ingress' ? 'ingress' : 'egress';
  const peersKey = direction === 'Ingress' ? 'from' : 'to';
  return selecting.some((p) =>
    ((p.spec[key] ?? []) as Doc[]).some(
      (rule) => peerMatches(rule[peersKey], peer, p.metadata.namespace ?? '') && portMatches(rule.ports, port),
    ),
  );
}

/** Whether `from` may open a connection to `to` on `port`: the source's egress and the destination's ingress. */
export function connectionAllowed(policies: Doc[], from: Endpoint, to: Endpoint, port: Port): boolean {
  const egress = from.ip !== undefined || from.labels === undefined ? true : allows(policies, 'Egress', from, to, port);
  const ingress = to.ip !== undefined || to.labels === undefined ? true : allows(policies, 'Ingress', to, from, port);
  return egress && ingress;
}
