import http from 'node:http';
import type { TLSSocket } from 'node:tls';

/**
 * The max-age of a Strict-Transport-Security header value (RFC 6797 6.1: directives separated by
 * semicolons, names case-insensitive, values optionally quoted), or undefined when there is none.
 */
export function hstsMaxAge(header: string | undefined): number | undefined {
  if (!header) return undefined;
  for (const directive of header.split(';')) {
    const match = /^\s*max-age\s*=\s*"?(\d{1,12})"?\s*$/i.exec(directive);
    if (match) return Number(match[1]);
  }
  return undefined;
}

/**
 * Asks for the home page's headers (HEAD /) over the already-open TLS connection, and returns the
 * first Strict-Transport-Security header. Any failure, or no answer within `timeoutMs`, is "no
 * header": HSTS only decides between A and A+.
 */
export function readHstsHeader(socket: TLSSocket, hostHeader: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const request = http.request({
      createConnection: () => socket,
      method: 'HEAD',
      path: '/',
      headers: { host: hostHeader, 'user-agent': 'Mozilla/5.0 (compatible; WebUtilBot/1.0; +https://webutil.dev/bot)' },
    });
    // A deadline for the whole answer, not an idle timer a trickling server could keep resetting.
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    const finish = (value: string | undefined) => {
      clearTimeout(timer);
      resolve(value);
      request.destroy();
    };
    request.on('response', (response) => {
      const header = response.headers['strict-transport-security'];
      finish(Array.isArray(header) ? header[0] : header);
    });
    request.on('error', () => finish(undefined));
    request.end();
  });
}
