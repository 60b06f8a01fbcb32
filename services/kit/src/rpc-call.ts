import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { ServiceError, toGrpcError } from './errors.js';
import type { Logger } from './logger.js';
import { observeRpc } from './metrics.js';

/** What every handler receives besides its request. */
export interface CallContext {
  /** Crosses edge -> service in the x-request-id metadata. */
  requestId: string;
  log: Logger;
  /** Aborts when the caller cancels or the call's deadline passes. */
  signal: AbortSignal;
  /** Epoch milliseconds, or Infinity when the caller set no deadline. */
  deadline: number;
}

export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;
export type StreamHandler<Req, Res> = (
  request: Req,
  ctx: CallContext,
  send: (message: Res) => Promise<void>,
) => Promise<void>;

/** One call in flight, whichever protocol carried it (gRPC or Connect). */
export interface StartedCall {
  ctx: CallContext;
  /** The caller went away. */
  cancel(): void;
  /** Records the outcome (metrics, log); returns the gRPC error to answer with, or null on success. */
  end(err?: unknown): Partial<grpc.ServiceError> | null;
}

export function startCall(
  rpc: string,
  log: Logger,
  caller: { requestId: string | undefined; deadline: number },
): StartedCall {
  const requestId = caller.requestId || randomUUID();
  const controller = new AbortController();
  const started = performance.now();
  let ended = false;
  let callLog: Logger | undefined;
  const ctx: CallContext = {
    requestId,
    // Most calls never log: the child logger is built on first use, not per call.
    get log() {
      callLog ??= log.child({ requestId, rpc });
      return callLog;
    },
    signal: controller.signal,
    deadline: caller.deadline,
  };
  return {
    ctx,
    // Both protocols cancel a call at its deadline, and grpc-js reports 'cancelled' after calls
    // it has answered too: only a call still running is aborted, with the reason that applies.
    cancel: () => {
      if (ended || controller.signal.aborted) return;
      controller.abort(
        // Timers may fire a few milliseconds before the deadline as Date.now() reads it.
        Date.now() + 5 >= caller.deadline
          ? new ServiceError(grpc.status.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED', 'deadline exceeded')
          : new ServiceError(grpc.status.CANCELLED, 'CANCELLED', 'cancelled by caller'),
      );
    },
    end: (err) => {
      ended = true;
      const ms = performance.now() - started;
      if (err === undefined) {
        observeRpc(rpc, 'OK', ms);
        log.info({ requestId, rpc, ms: Math.round(ms), code: 'OK' }, 'rpc done');
        return null;
      }
      const failure = toGrpcError(err);
      const codeName = grpc.status[failure.code ?? grpc.status.UNKNOWN] ?? 'UNKNOWN';
      observeRpc(rpc, codeName, ms);
      if (err instanceof ServiceError)
        ctx.log.info({ ms: Math.round(ms), code: codeName, reason: err.reason }, 'rpc failed');
      else ctx.log.error({ ms: Math.round(ms), code: codeName, err }, 'rpc crashed');
      return failure;
    },
  };
}
