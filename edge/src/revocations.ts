import { type Logger, REVOCATIONS_SUBJECT } from '@webutil/kit';
import { connect, type NatsConnection } from 'nats';

/**
 * Listens for billing's notices that an account's credentials or plan changed and hands each
 * account's subject to `revoke`. The edge serves meanwhile: it connects (and reconnects) in the
 * background; a notice sent while it was cut off is lost, and the edge then sees the change within
 * CALLER_VIEW_MS, as it would without NATS.
 */
export function listenForRevocations(url: string, revoke: (subject: string) => void, log: Logger): { close(): void } {
  const connection: Promise<NatsConnection | undefined> = connect({
    servers: url,
    name: 'edge-revocations',
    waitOnFirstConnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
  }).then(
    (nc) => {
      nc.subscribe(REVOCATIONS_SUBJECT, {
        callback: (err, message) => {
          if (err) log.warn({ err: err.message }, 'revocation notices failed');
          else revoke(message.string());
        },
      });
      return nc;
    },
    (err: Error) => {
      log.error({ err: err.message }, 'cannot listen for revocation notices');
      return undefined;
    },
  );
  // Not awaited: a connection still being tried must not hold up the shutdown.
  return { close: () => void connection.then((nc) => nc?.close()) };
}
