import { connect, type NatsConnection } from 'nats';

/** A replica's connection to NATS: it waits for the server at start and reconnects for as long as it runs. */
export function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500, waitOnFirstConnect: true });
}
