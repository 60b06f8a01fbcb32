import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { CidrList, canonicalIp, clientNetwork } from '@webutil/kit';
import type Koa from 'koa';
import { answerClientErrors, answerOnSocket } from './client-errors.js';
import { HttpError } from './envelope.js';

export interface ConnectionLimits {
  /** Time to receive a request's headers, from the connection or the previous response. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included (not to answer it: routes have deadlines). */
  requestTimeoutMs: number;
  /** The request line plus headers may be this long; past it, 431 (the message states the limit). */
  maxHeaderBytes: number;
  /** How long a kept-alive connection may sit idle between requests. */
  keepAliveTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed (past every route deadline). */
  socketIdleTimeoutMs: number;
  /** Open connections per client network (IPv4 address, IPv6 /64); trusted proxies are exempt. */
  maxConnectionsPerClient: number;
  trustedProxies: readonly string[];
}

/**
 * How long a connection the edge closes may go on sending before it is cut: the client has its
 * answer by then, whatever it still sends is discarded (as nginx's lingering_timeout, 5 s).
 */
const LINGER_MS = 5_000;
/** A refused connection's Retry-After: one of the client's open connections is typically done within it. */
const CONNECTION_RETRY_AFTER_SECONDS = 1;

/** The client waits for `100 Continue` before sending its body. */
const EXPECTS_CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * Asks for the request's body, when its client waits to be asked (`Expect: 100-continue`). The
 * server leaves that to the routes: a request refused from its headers is answered without it,
 * and its body is never sent.
 */
export function continueBody(req: IncomingMessage, res: ServerResponse): void {
  if (EXPECTS_CONTINUE.test(req.headers.expect ?? '') && !res.headersSent) res.writeContinue();
}

/**
 * The edge's HTTP server: a client that trickles its headers or body gets 408 in the error
 * envelope when its time is up (client-errors.ts writes it), idle connections are closed, and no
 * client network holds more than its share of connections (429 before any request is read).
 */
export function createServer(app: Koa, limits: ConnectionLimits): http.Server {
  const handle = app.callback();
  // Node parses what a refused connection sends anyway: such requests are dropped unanswered.
  const refused = new WeakSet<Socket>();
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      maxHeaderSize: limits.maxHeaderBytes,
      // Node checks the two timeouts every 30 s by default, which would let a slow client overstay.
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, limits.headersTimeoutMs / 4)),
    },
    (req, res) => {
      if (!refused.has(req.socket)) void handle(req, res);
    },
  );
  server.timeout = limits.socketIdleTimeoutMs;
  // Node would send `100 Continue` before the request is seen; the routes decide (continueBody).
  server.on('checkContinue', (req, res) => server.emit('request', req, res));

  answerClientErrors(server, limits.maxHeaderBytes);

  const trusted = new CidrList(limits.trustedProxies);
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const peer = canonicalIp(socket.remoteAddress ?? '') ?? '';
    if (trusted.has(peer)) return; // a proxy carries many clients; they are limited behind it
    const network = clientNetwork(peer);
    const count = (open.get(network) ?? 0) + 1;
    if (count > limits.maxConnectionsPerClient) {
      refused.add(socket);
      answerOnSocket(
        socket,
        new HttpError(429, 'too_many_connections', 'this client has too many open connections', undefined, {
          'Retry-After': String(CONNECTION_RETRY_AFTER_SECONDS),
        }),
      );
      return;
    }
    open.set(network, count);
    socket.once('close', () => {
      const left = (open.get(network) ?? 1) - 1;
      if (left > 0) open.set(network, left);
      else open.delete(network);
    });
  });
  return server;
}

/**
 * Answers a request whose body is not read (refused from its headers, or while it streams): the
 * connection closes after the answer. Node would close it with end() and, once that is sent,
 * destroy(); data still arriving from a client that is sending its body then makes the kernel
 * answer with a reset, and the client may lose the answer it had not read yet (EPIPE or
 * ECONNRESET instead of a 413). Instead, as web servers' lingering close does: half-close, keep
 * discarding what arrives (Node reads the request and drops it), and close once the client closes
 * its side, or after LINGER_MS.
 */
export function closeAfterAnswer(res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  const socket = res.socket;
  if (!socket) return;
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
    // Closed on both sides, the socket destroys itself (autoDestroy); this bounds a client that is not done.
    const cut = setTimeout(() => socket.destroy(), LINGER_MS);
    socket.once('close', () => clearTimeout(cut));
  };
}
