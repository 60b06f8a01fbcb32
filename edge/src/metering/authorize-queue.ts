import type { AuthorizeFailure, AuthorizeRequest, AuthorizeResponse } from '@webutil/proto/webutil/billing/v1/billing';
import { type BillingClient, billingCall } from '../billing-client.js';

interface Waiting {
  request: AuthorizeRequest;
  requestId: string;
  resolve(response: AuthorizeResponse): void;
  reject(err: unknown): void;
}

/** Batches in flight at once: a slow one does not hold up every call behind it. */
const MAX_IN_FLIGHT = 2;
const MAX_BATCH = 128;

/**
 * Authorize calls batched by group commit: a call goes out at once while fewer than two batches
 * are in flight; calls made meanwhile leave together, as one AuthorizeBatch, when one returns.
 * Idle, an authorization costs one round trip as before; under load, one RPC carries many, and
 * gRPC's cost per call (most of the edge's and billing's CPU per metered request) is paid once
 * per batch. Each authorization is decided by billing exactly as a single call would be.
 */
export class AuthorizeQueue {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(private readonly billing: BillingClient) {}

  authorize(request: AuthorizeRequest, requestId: string): Promise<AuthorizeResponse> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, requestId, resolve, reject });
      this.sendNext();
    });
  }

  private sendNext(): void {
    if (this.inFlight >= MAX_IN_FLIGHT || this.waiting.length === 0) return;
    const batch = this.waiting.splice(0, MAX_BATCH);
    this.inFlight++;
    void this.send(batch).finally(() => {
      this.inFlight--;
      this.sendNext();
    });
  }

  private async send(batch: Waiting[]): Promise<void> {
    const [first] = batch;
    if (!first) return;
    try {
      if (batch.length === 1) {
        first.resolve(await this.billing.authorize(first.request, billingCall(first.requestId)));
        return;
      }
      const { responses } = await this.billing.authorizeBatch(
        { requests: batch.map((waiting) => waiting.request) },
        billingCall(first.requestId),
      );
      batch.forEach((waiting, i) => {
        const response = responses[i];
        if (!response) waiting.reject(new Error('billing answered fewer authorizations than it was asked'));
        else if (response.outcome?.$case === 'failure') waiting.reject(failedCall(response.outcome.failure));
        else waiting.resolve(response);
      });
    } catch (err) {
      for (const waiting of batch) waiting.reject(err);
    }
  }
}

/** One authorization of a batch that billing failed, as the failed call it would have been alone. */
function failedCall({ code, message }: AuthorizeFailure): Error {
  return Object.assign(new Error(message), { code, details: message });
}
