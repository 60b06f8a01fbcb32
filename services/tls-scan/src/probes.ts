import type { SecureContext } from 'node:tls';
import {
  CIPHER_CONTEXTS,
  connectTls,
  type Endpoint,
  type Negotiated,
  negotiatedOf,
  TLS_VERSIONS,
  type TlsVersion,
  VERSION_CONTEXTS,
} from './handshake.js';

/** What the server accepts, from the main handshake and the probes. */
export interface ServerSupport {
  /** Versions that completed a handshake, oldest first. */
  protocols: TlsVersion[];
  /** Strongest and weakest bulk cipher seen in any handshake, in bits. */
  strongestBits: number;
  weakestBits: number;
  /** A suite without encryption or without authentication that the server accepted. */
  insecure: Negotiated | undefined;
  /** Handshakes made, the main one included. */
  handshakes: number;
}

interface Probe {
  context: SecureContext;
  version?: TlsVersion;
}

/**
 * The probes the main handshake leaves open: every other protocol version, a suite without
 * encryption or authentication, and the strength class (128 or 256 bits) not yet seen. At most
 * six, all at once, each within `timeoutMs`; a probe that fails or times out counts as refused.
 */
export function probesFor(main: Negotiated): Probe[] {
  const probes: Probe[] = TLS_VERSIONS.filter((v) => v !== main.protocol).map((version) => ({
    context: VERSION_CONTEXTS[version],
    version,
  }));
  probes.push({ context: CIPHER_CONTEXTS.insecure });
  if (main.bits !== 128) probes.push({ context: CIPHER_CONTEXTS.bits128 });
  if (main.bits < 256) probes.push({ context: CIPHER_CONTEXTS.bits256 });
  return probes;
}

export async function probeSupport(
  endpoint: Endpoint,
  main: Negotiated,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ServerSupport> {
  const probes = probesFor(main);
  const results = await Promise.all(
    probes.map(async (probe) => {
      try {
        const socket = await connectTls(endpoint, probe.context, timeoutMs, signal);
        const negotiated = negotiatedOf(socket);
        socket.destroy();
        return negotiated;
      } catch {
        return undefined;
      }
    }),
  );
  const accepted = [main, ...results.filter((r): r is Negotiated => r !== undefined)];
  const protocols = TLS_VERSIONS.filter((v) => accepted.some((n) => n.protocol === v));
  const bits = accepted.map((n) => n.bits);
  return {
    protocols,
    strongestBits: Math.max(...bits),
    weakestBits: Math.min(...bits),
    insecure: accepted.find((n) => n.bits === 0 || n.anonymous),
    handshakes: 1 + probes.length,
  };
}
