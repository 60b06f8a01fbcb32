import http from 'node:http';
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
      answerOnSocket(socket, new HttpError(429, 'too_many_connections', 'this client has too many open connections'));
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
