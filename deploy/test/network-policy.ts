import ipaddr from 'ipaddr.js';
import type { Manifest } from './kubernetes-schemas.js';

/** A pod: its namespace, labels and address. */
export interface Pod {
  namespace: string;
  labels: Record<string, string>;
  ip: string;
}

/** Where a connection goes: a pod, or an address outside the cluster; a port and protocol. */
export interface Destination {
  pod?: Pod;
  ip: string;
  port: number;
  protocol?: 'TCP' | 'UDP';
}

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/**
 * Whether the NetworkPolicies of one namespace let `from` open a connection to `to`, as the API defines
 * them: a pod selected by no policy of a direction is open in it; a selected pod admits what any rule of
 * any selecting policy admits, and a connection needs both the sender's egress and the receiver's ingress.
 */
export function connects(policies: Manifest[], namespace: string, from: Pod, to: Destination): boolean {
  const protocol = to.protocol ?? 'TCP';
  const egress = admitted(policies, namespace, from, 'Egress', (rule, policyNamespace) =>
    rulePasses(rule.to, rule.ports, policyNamespace, to, to.port, protocol),
  );
  if (!egress || !to.pod) return egress;
  const sender: Destination = { pod: from, ip: from.ip, port: to.port };
  return admitted(policies, namespace, to.pod, 'Ingress', (rule, policyNamespace) =>
    rulePasses(rule.from, rule.ports, policyNamespace, sender, to.port, protocol),
  );
}

function admitted(
  policies: Manifest[],
  namespace: string,
  pod: Pod,
  direction: 'Ingress' | 'Egress',
  passes: (rule: Manifest, policyNamespace: string) => boolean,
): boolean {
  if (pod.namespace !== namespace) return true; // no policy of ours selects it
  const selecting = policies.filter(
    (p) => selects(p.spec.podSelector, pod.labels) && (p.spec.policyTypes ?? ['Ingress']).includes(direction),
  );
  if (selecting.length === 0) return true;
  const key = direction === 'Egress' ? 'egress' : 'ingress';
  return selecting.some((p) => ((p.spec[key] ?? []) as Manifest[]).some((rule) => passes(rule, namespace)));
}

function rulePasses(
  peers: Manifest[] | undefined,
  ports: Manifest[] | undefined,
  policyNamespace: string,
  peer: Destination,
  port: number,
  protocol: string,
): boolean {
  const peerOk = !peers || peers.length === 0 || peers.some((p) => peerMatches(p, policyNamespace, peer));
  const portOk =
    !ports ||
    ports.length === 0 ||
    ports.some((p) => {
      if (typeof p.port === 'string') throw new Error(`named port ${p.port}: not modelled`);
      const inRange = p.port === undefined || (p.endPort ? port >= p.port && port <= p.endPort : port === p.port);
      return (p.protocol ?? 'TCP') === protocol && inRange;
    });
  return peerOk && portOk;
}

function peerMatches(peer: Manifest, policyNamespace: string, target: Destination): boolean {
  if (peer.ipBlock) {
    // Matched by address, pods' too: the API leaves that to the network plugin; the tests' pods have
    // cluster addresses, which blockedCidrs holds, so both readings agree.
    const address = ipaddr.parse(target.ip);
    const within = (cidr: string) => {
      const range = ipaddr.parseCIDR(cidr);
      return range[0].kind() === address.kind() && address.match(range);
    };
    return within(peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some(within);
  }
  if (!target.pod) return false;
  const namespaceLabels = { 'kubernetes.io/metadata.name': target.pod.namespace };
  const namespaceOk = peer.namespaceSelector
    ? selects(peer.namespaceSelector, namespaceLabels)
    : target.pod.namespace === policyNamespace;
  return namespaceOk && (!peer.podSelector || selects(peer.podSelector, target.pod.labels));
}

function selects(selector: Selector, labels: Record<string, string>): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === 'In') return labels[key] !== undefined && values.includes(labels[key]);
    if (operator === 'NotIn') return labels[key] === undefined || !values.includes(labels[key]);
    if (operator === 'Exists') return key in labels;
    if (operator === 'DoesNotExist') return !(key in labels);
    throw new Error(`selector operator ${operator}: not modelled`);
  });
  return byLabel && byExpression;
}
