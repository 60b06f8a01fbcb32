import { status } from '@grpc/grpc-js';
import { resourceExhausted, toGrpcError } from '@webutil/kit';
import { expect } from 'chai';
import { httpErrorFromCall, UNAVAILABLE_RETRY_AFTER_S } from '../src/call-errors.js';

describe('a failed RPC as the HTTP failure', () => {
  it('answers a full service (RESOURCE_EXHAUSTED with a reason) with 429 and its Retry-After', () => {
    const failure = httpErrorFromCall(toGrpcError(resourceExhausted('QUEUE_FULL', 'the queue is full', 2)), {});
    expect(failure).to.include({ status: 429, code: 'queue_full', message: 'the queue is full' });
    expect(failure.headers).to.deep.equal({ 'Retry-After': '2' });
  });

  it('answers a service that is down (UNAVAILABLE from grpc-js, no reason) with 503 and Retry-After', () => {
    const down = Object.assign(new Error('14 UNAVAILABLE: No connection established'), {
      code: status.UNAVAILABLE,
      details: 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:50052',
    });
    const failure = httpErrorFromCall(down, {});
    expect(failure).to.include({ status: 503, code: 'service_unavailable' });
    expect(failure.headers).to.deep.equal({ 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S) });
  });

  it('answers grpc-js’s own RESOURCE_EXHAUSTED (a reply over the size limit) with 500, not a rate limit', () => {
    const tooLarge = Object.assign(new Error('Received message larger than max'), {
      code: status.RESOURCE_EXHAUSTED,
      details: 'Received message larger than max (70000000 vs 67108864)',
    });
    expect(httpErrorFromCall(tooLarge, {})).to.include({
      status: 500,
      code: 'internal_error',
      message: 'internal error',
    });
  });
});
