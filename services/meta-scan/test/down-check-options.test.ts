import { ServiceError } from '@webutil/kit';
import { expect } from 'chai';
import { downCheckOptions, parseExpectStatus } from '../src/down-check.js';

/** The reason and message of the INVALID_ARGUMENT a request's options raise. */
function refusal(request: Parameters<typeof downCheckOptions>[0]): string {
  try {
    downCheckOptions(request);
  } catch (err) {
    expect(err).to.be.instanceOf(ServiceError);
    return `${(err as ServiceError).reason}: ${(err as Error).message}`;
  }
  return expect.fail('expected the options to be refused');
}

describe('down-check options (for callers that skip the edge)', () => {
  it('reads a code or an inclusive range of codes', () => {
    expect(parseExpectStatus('200')).to.deep.equal({ min: 200, max: 200 });
    expect(parseExpectStatus(' 200 - 299 ')).to.deep.equal({ min: 200, max: 299 });
    for (const bad of ['', '2xx', '99', '600', '300-200', '200-', '200-299-300']) {
      expect(parseExpectStatus(bad), bad).to.be.a('string');
    }
  });

  it('defaults to GET, and refuses what the edge refuses, naming the field', () => {
    expect(downCheckOptions({ url: 'x' })).to.deep.equal({ method: 'GET' });
    expect(downCheckOptions({ url: 'x', method: 'HEAD', expectStatus: '404' })).to.deep.equal({
      method: 'HEAD',
      expectStatus: { min: 404, max: 404 },
    });
    expect(refusal({ url: 'x', method: 'POST' })).to.equal('INVALID_METHOD: method must be one of GET, HEAD');
    expect(refusal({ url: 'x', expectStatus: '2xx' })).to.match(/^INVALID_EXPECT_STATUS: expectStatus must/);
    expect(refusal({ url: 'x', keyword: 'k'.repeat(201) })).to.match(/^INVALID_KEYWORD: keyword must be at most 200/);
    expect(refusal({ url: 'x', keyword: 'ok', method: 'HEAD' })).to.match(/^INVALID_KEYWORD: keyword needs method GET/);
  });
});
