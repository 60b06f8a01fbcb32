import { randomUUID } from 'node:crypto';
import { type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { CREDITS_HEADER, failureBody, HttpError } from './envelope.js';

/** A byte count as the 431 message states it: `16 KB` for whole kibibytes, else `1000 bytes`. */
const sizeText = (bytes: number) => (bytes % 1024 === 0 ? `${bytes / 1024} KB` : `${bytes} bytes`);

/** Node's parser failures, as the statuses Node itself would send; `headerLimit` is the server's maxHeaderSize. */
function parserFailure(code: string | undefined, headerLimit: number): HttpError {
  if (code === 'HPE_HEADER_OVERFLOW')
    return new HttpError(431, 'headers_too_large', `the request line and headers exceed ${sizeText(headerLimit)}`);
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new HttpError(408, 'request_timeout', 'the request did not arrive in time');
  return new HttpError(400, 'bad_request', 'the request is not valid HTTP/1.1');
}

/**
 * Requests Node's HTTP parser refuses before Koa sees them (an oversized query or header block,
 * malformed HTTP, a request too slow to arrive) get the envelope, an X-Request-Id, and
 * X-Credits-Remaining 0 (the caller's headers were never read), instead of a bare status line.
 */
export function answerClientErrors(server: Server, headerLimit: number): void {
  // A kept-alive connection may still be writing an earlier request's response: its latest one.
  const latest = new WeakMap<Socket, ServerResponse>();
  server.on('request', (req, res: ServerResponse) => latest.set(req.socket, res));
  const underWay = (res: ServerResponse | undefined) => res?.headersSent === true && !res.writableFinished;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A response already under way, or a peer that is gone, cannot take another.
    if (err.code === 'ECONNRESET' || !socket.writable || underWay(latest.get(socket))) {
      socket.destroy();
      return;
    }
    answerOnSocket(socket, parserFailure(err.code, headerLimit));
  });
}

/** Writes a failure as a complete HTTP/1.1 response on a socket no request owns, and closes it. */
export function answerOnSocket(socket: Socket, failure: HttpError): void {
  const body = JSON.stringify(failureBody(failure));
  socket.end(
    [
      `HTTP/1.1 ${failure.status} ${STATUS_CODES[failure.status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${randomUUID()}`,
      `${CREDITS_HEADER}: 0`,
      ...Object.entries(failure.headers).map(([name, value]) => `${name}: ${value}`),
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
  // A client that never reads its answer must not keep the socket.
  socket.setTimeout(5_000, () => socket.destroy());
}
