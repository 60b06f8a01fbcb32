/**
 * Ticketbleed (F5): a ticket sent with a one-byte session ID; an affected server echoes 32 bytes,
 * the 31 after ours from its memory. A server that resumes echoes our one byte; one that does not
 * resume sends a fresh ID, so two tries with different bytes tell an echo from chance.
 */
import { clientHello, exchangeHello, type WireVersion } from '../raw-hello.js';
import {
  CHECKS,
  type Context,
  connectAt,
  legacyProtocol,
  type VulnerabilityResult,
  verdict,
  withoutLegacy,
} from './check.js';

export async function ticketbleed(ctx: Context): Promise<VulnerabilityResult> {
  const check = CHECKS.ticketbleed;
  const legacy = legacyProtocol(ctx.suites);
  if (!legacy) return withoutLegacy(ctx, check, 'no TLS 1.2-or-older handshake to probe');
  const ticket = await sessionTicket(ctx, legacy.version);
  if (!ticket) return verdict(check, 'not_vulnerable', 'the server issues no session ticket');
  let echoed = 0;
  for (const first of [0x5a, 0xa5]) {
    const flight = await exchangeHello(
      ctx.endpoint,
      clientHello({
        version: legacy.version,
        suites: legacy.codes,
        sessionTicket: ticket,
        sessionId: Buffer.from([first]),
        servername: ctx.endpoint.servername,
      }),
      ctx.timeoutMs,
      ctx.signal,
    );
    if (!flight.hello) return verdict(check, 'unknown', 'the resumption hello got no ServerHello');
    const id = flight.hello.sessionId;
    if (id.length === 32 && id[0] === first) echoed++;
  }
  return echoed === 2
    ? verdict(check, 'vulnerable', "a one-byte session ID came back as 32 bytes: 31 bytes of the server's memory")
    : verdict(check, 'not_vulnerable', 'the session ID sent with a ticket is not padded with memory');
}

/** A session ticket from one full handshake over Node's TLS (at the version the raw probes speak). */
function sessionTicket(ctx: Context, version: WireVersion): Promise<Buffer | undefined> {
  if (version === 'SSLv3') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const socket = connectAt(ctx, version);
    const finish = (ticket: Buffer | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ticket);
    };
    const timer = setTimeout(() => finish(undefined), ctx.timeoutMs);
    socket.once('secureConnect', () => finish(socket.getTLSTicket()));
    socket.once('error', () => finish(undefined));
  });
}
