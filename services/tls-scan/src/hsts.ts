import type { TLSSocket } from 'node:tls';
import { connectTls, type Endpoint, MAIN_CONTEXT } from './handshake.js';

/** A Strict-Transport-Security header's directives (RFC 6797 6.1). */
export interface HstsPolicy {
  maxAge: number;
  includeSubDomains: boolean;
  preload: boolean;
}

/**
 * A Strict-Transport-Security header value parsed (RFC 6797 6.1: directives separated by
 * semicolons, names case-insensitive, values optionally quoted). Undefined when there is no valid
 * max-age: browsers ignore such a header (6.1.1), so it is no policy.
 */
export function parseHsts(value: string | undefined): HstsPolicy | undefined {
  if (!value) return undefined;
  let maxAge: number | undefined;
  let includeSubDomains = false;
  let preload = false;
  for (const directive of value.split(';')) {
    const name = directive.split('=')[0]?.trim().toLowerCase();
    if (name === 'max-age') {
      const match = /^\s*max-age\s*=\s*"?(\d{1,12})"?\s*$/i.exec(directive);
      if (!match) return undefined;
      maxAge = Number(match[1]);
    } else if (name === 'includesubdomains') includeSubDomains = true;
    else if (name === 'preload') preload = true;
  }
  return maxAge === undefined ? undefined : { maxAge, includeSubDomains, preload };
}

/** The max-age of a Strict-Transport-Security header value, or undefined when there is none. */
export const hstsMaxAge = (value: string | undefined): number | undefined => parseHsts(value)?.maxAge;

/** What the home page's answer head said, or that none came. */
export type HomePage =
  | { answered: true; status: number; headers: Record<string, string> }
  | { answered: false; why: string };

/** An answer head larger than this is not read further: the headers the scan needs come first in practice. */
const MAX_HEAD_BYTES = 32 * 1024;

/**
 * The head of the answer to `GET /` on a connection of its own to the checked address, made as the
 * main handshake is (every protocol version, certificate not checked), so a server that speaks only
 * TLS 1.0 is read too. The scan then says whether a browser would honour what it read (RFC 6797 8.1:
 * not over a certificate with errors). GET, not HEAD, with the encodings browsers accept: the answer's
 * Content-Encoding tells BREACH's precondition. Only the head is read (at most 32 KB), within `timeoutMs`.
 */
export async function readHomePage(
  endpoint: Endpoint,
  authority: string,
  timeoutMs: number,
  signal: AbortSignal,
  onConnect?: () => void,
): Promise<HomePage> {
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
  let socket: TLSSocket;
  try {
    socket = await connectTls(endpoint, MAIN_CONTEXT, timeoutMs, deadline, { alpn: ['http/1.1'], onConnect });
  } catch (err) {
    return { answered: false, why: `no TLS connection for the request (${(err as Error).message})` };
  }
  return new Promise<HomePage>((resolve) => {
    let head = Buffer.alloc(0);
    const finish = (page: HomePage) => {
      deadline.removeEventListener('abort', onDeadline);
      socket.destroy();
      resolve(page);
    };
    const onDeadline = () => finish({ answered: false, why: `no answer within ${timeoutMs / 1000} s` });
    if (deadline.aborted) return onDeadline();
    deadline.addEventListener('abort', onDeadline, { once: true });
    socket.on('data', (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end >= 0) return finish(parseHead(head.subarray(0, end).toString('latin1')));
      if (head.length > MAX_HEAD_BYTES) finish({ answered: false, why: 'the answer head exceeds 32 KB' });
    });
    socket.on('error', () => finish({ answered: false, why: 'the connection failed before the answer' }));
    socket.on('end', () => finish({ answered: false, why: 'the server closed the connection without an answer' }));
    socket.write(
      `GET / HTTP/1.1\r\nHost: ${authority}\r\nUser-Agent: webutil-ssl-scan\r\nAccept: text/html,*/*\r\n` +
        'Accept-Encoding: gzip, deflate, br\r\nConnection: close\r\n\r\n',
    );
  });
}

function parseHead(text: string): HomePage {
  const [statusLine = '', ...lines] = text.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  if (!status) return { answered: false, why: 'the answer is not HTTP/1.1' };
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    // The first of a repeated header counts, as browsers take the first Strict-Transport-Security (RFC 6797 8.1).
    headers[name] ??= line.slice(colon + 1).trim();
  }
  return { answered: true, status: Number(status), headers };
}
