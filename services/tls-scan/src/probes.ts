import type { SecureContext } from 'node:tls';
import { OutboundError } from '@webutil/kit';
import {
  CIPHER_CONTEXTS,
  connectTls,
  type Endpoint,
  MAIN_CONTEXT,
  type Negotiated,
  negotiatedOf,
  TLS_VERSIONS,
  type TlsVersion,
  VERSION_CONTEXTS,
} from './handshake.js';

/** What the main handshake offers for ALPN, in the order browsers do. */
export const ALPN_OFFER = ['h2', 'http/1.1'] as const;

/** What the server accepts, from the main handshake and the probes. */
export interface ServerSupport {
  /** Versions that completed a handshake, oldest first. */
  protocols: TlsVersion[];
  /** Each version: accepted, refused, or undefined when no probe could tell. */
  versions: { version: TlsVersion; supported: boolean | undefined }[];
  /** Strongest and weakest bulk cipher seen in any handshake, in bits. */
  strongestBits: number;
  weakestBits: number;
  /** A suite without encryption or without authentication that the server accepted. */
  insecure: Negotiated | undefined;
  /** ALPN protocols the server selected when offered, in ALPN_OFFER's order. */
  alpn: string[];
  /** Handshakes made, the main one included. */
  handshakes: number;
}

interface Probe {
  context: SecureContext;
  version?: TlsVersion;
  /** An ALPN probe: offers this protocol alone. */
  alpn?: string;
}

/**
 * The probes the main handshake leaves open: every other protocol version, a suite without
 * encryption or authentication, the strength class (128 or 256 bits) not yet seen, and the ALPN
 * protocol the server did not select (when it selected one). At most seven, all at once, each within
 * `timeoutMs`.
 */
export function probesFor(main: Negotiated, mainAlpn: string | undefined): Probe[] {
  const probes: Probe[] = TLS_VERSIONS.filter((v) => v !== main.protocol).map((version) => ({
    context: VERSION_CONTEXTS[version],
    version,
  }));
  probes.push({ context: CIPHER_CONTEXTS.insecure });
  if (main.bits !== 128) probes.push({ context: CIPHER_CONTEXTS.bits128 });
  if (main.bits < 256) probes.push({ context: CIPHER_CONTEXTS.bits256 });
  // A server without ALPN selects nothing whatever is offered: one probe would tell nothing more.
  const other = ALPN_OFFER.find((p) => p !== mainAlpn);
  if (mainAlpn && other) probes.push({ context: MAIN_CONTEXT, alpn: other });
  return probes;
}

/**
 * A probe's failure as an answer: the server refused (an alert, or it closed the connection on
 * our hello) is false; no answer in time, no connection, or a version this runtime's OpenSSL
 * cannot offer is undefined: the probe could not tell.
 */
export function refusalOf(err: unknown): false | undefined {
  if (!(err instanceof OutboundError) || err.kind !== 'tls') return undefined;
  if (err.code === 'ETIMEDOUT' || /NO_PROTOCOLS_AVAILABLE/.test(err.code)) return undefined;
  return false;
}

type Outcome = { negotiated: Negotiated; alpn: string | false } | { refused: false | undefined };

export async function probeSupport(
  endpoint: Endpoint,
  main: Negotiated,
  mainAlpn: string | undefined,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ServerSupport> {
  const probes = probesFor(main, mainAlpn);
  const outcomes = await Promise.all(
    probes.map(async (probe): Promise<Outcome> => {
      try {
        const offer = probe.alpn ? { alpn: [probe.alpn] } : {};
        const socket = await connectTls(endpoint, probe.context, timeoutMs, signal, offer);
        const negotiated = negotiatedOf(socket);
        const alpn = socket.alpnProtocol ?? false;
        socket.destroy();
        return { negotiated, alpn };
      } catch (err) {
        return { refused: refusalOf(err) };
      }
    }),
  );
  const completed = outcomes.flatMap((o) => ('negotiated' in o ? [o.negotiated] : []));
  const accepted = [main, ...completed];
  const protocols = TLS_VERSIONS.filter((v) => accepted.some((n) => n.protocol === v));
  const versions = TLS_VERSIONS.map((version) => {
    if (protocols.includes(version)) return { version, supported: true };
    const i = probes.findIndex((p) => p.version === version);
    const outcome = outcomes[i];
    return { version, supported: outcome && 'refused' in outcome ? outcome.refused : undefined };
  });
  const selected = new Set<string>(mainAlpn ? [mainAlpn] : []);
  for (const [i, probe] of probes.entries()) {
    const outcome = outcomes[i];
    if (probe.alpn && outcome && 'alpn' in outcome && outcome.alpn === probe.alpn) selected.add(probe.alpn);
  }
  const bits = accepted.map((n) => n.bits);
  return {
    protocols,
    versions,
    strongestBits: Math.max(...bits),
    weakestBits: Math.min(...bits),
    insecure: accepted.find((n) => n.bits === 0 || n.anonymous),
    alpn: ALPN_OFFER.filter((p) => selected.has(p)),
    handshakes: 1 + probes.length,
  };
}
