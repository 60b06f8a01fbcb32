import type { IncomingHttpHeaders } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import {
  deadlineExceeded,
  invalidArgument,
  notFound,
  readGrpcError,
  resourceExhausted,
  type ServiceError,
  toGrpcError,
  unavailable,
} from '../src/errors.js';

const DETAILS_KEY = 'grpc-status-details-bin';

/** What the client side sees after the trailers cross the wire: HTTP/2 headers and back. */
function overTheWire(metadata: grpc.Metadata): grpc.Metadata {
  return grpc.Metadata.fromHttp2Headers(metadata.toHttp2Headers() as IncomingHttpHeaders);
}

describe('toGrpcError / readGrpcError', () => {
  const cases: [string, ServiceError][] = [
    ['INVALID_ARGUMENT', invalidArgument('INVALID_URL', 'only http and https URLs are supported')],
    ['NOT_FOUND', notFound('JOB_NOT_FOUND', 'no such job')],
    ['DEADLINE_EXCEEDED', deadlineExceeded('RENDER_TIMEOUT', 'rendering took too long')],
    ['RESOURCE_EXHAUSTED', resourceExhausted('RATE_LIMITED', 'slow down')],
    ['UNAVAILABLE', unavailable('BUSY', 'queue full')],
  ];
  for (const [name, err] of cases) {
    it(`round-trips ${name} with reason ${err.reason} through ${DETAILS_KEY}`, () => {
      const sent = toGrpcError(err);
      expect(sent.code).to.equal(err.code);
      expect(sent.details).to.equal(err.message);
      expect(sent.metadata).to.be.instanceOf(grpc.Metadata);
      const raw = sent.metadata!.get(DETAILS_KEY);
      expect(raw).to.have.length(1);
      expect(raw[0]).to.be.instanceOf(Buffer);

      const received = readGrpcError({ code: sent.code, details: sent.details, metadata: overTheWire(sent.metadata!) });
      expect(received).to.deep.equal({ code: err.code, message: err.message, reason: err.reason });
    });
  }

  it('carries a retry-after hint when the service gives one', () => {
    const sent = toGrpcError(resourceExhausted('RENDER_BUSY', 'every browser is busy', 3));
    const received = readGrpcError({ code: sent.code, details: sent.details, metadata: overTheWire(sent.metadata!) });
    expect(received).to.deep.equal({
      code: grpc.status.RESOURCE_EXHAUSTED,
      message: 'every browser is busy',
      reason: 'RENDER_BUSY',
      retryAfterSeconds: 3,
    });
  });

  it('encodes the trailer as base64 binary metadata on the wire', () => {
    const headers = toGrpcError(notFound('JOB_NOT_FOUND', 'x')).metadata!.toHttp2Headers();
    const value = headers[DETAILS_KEY];
    expect(value).to.be.a('string');
    expect(Buffer.from(value as string, 'base64').length).to.be.greaterThan(0);
    expect(Buffer.from(value as string, 'base64').toString('latin1')).to.include('JOB_NOT_FOUND');
  });

  it('turns a plain Error into INTERNAL with reason INTERNAL and no leaked message', () => {
    const secret = 'connect ECONNREFUSED mongodb://admin:hunter2@10.1.2.3/db';
    const sent = toGrpcError(new Error(secret));
    expect(sent.code).to.equal(grpc.status.INTERNAL);
    expect(sent.details).to.equal('internal error');
    const wire = JSON.stringify(sent.metadata!.toHttp2Headers());
    const decodedWire = Buffer.from(String(sent.metadata!.toHttp2Headers()[DETAILS_KEY]), 'base64').toString('latin1');
    for (const text of [wire, decodedWire, sent.details!]) {
      expect(text).to.not.include('hunter2');
      expect(text).to.not.include('ECONNREFUSED');
    }
    const received = readGrpcError({ ...sent, metadata: overTheWire(sent.metadata!) });
    expect(received).to.deep.equal({ code: grpc.status.INTERNAL, message: 'internal error', reason: 'INTERNAL' });
  });

  for (const thrown of ['a string', undefined, null, 42, { code: 5, details: 'looks like grpc' }]) {
    it(`turns a thrown ${JSON.stringify(thrown) ?? 'undefined'} into INTERNAL`, () => {
      const sent = toGrpcError(thrown);
      expect(sent.code).to.equal(grpc.status.INTERNAL);
      expect(readGrpcError(sent).reason).to.equal('INTERNAL');
    });
  }

  it('reads a failure without details as code and message only', () => {
    expect(
      readGrpcError({
        code: grpc.status.UNAVAILABLE,
        details: 'No connection established',
        metadata: new grpc.Metadata(),
      }),
    ).to.deep.equal({
      code: grpc.status.UNAVAILABLE,
      message: 'No connection established',
    });
  });

  it('survives undecodable details', () => {
    const metadata = new grpc.Metadata();
    metadata.set(DETAILS_KEY, Buffer.from([0xff, 0xff, 0xff, 0x01, 0x02]));
    const failure = readGrpcError({ code: grpc.status.INTERNAL, details: 'boom', metadata });
    expect(failure.code).to.equal(grpc.status.INTERNAL);
    expect(failure.message).to.equal('boom');
    expect(failure.reason).to.equal(undefined);
  });

  it('reads something that is not a gRPC error as UNKNOWN', () => {
    expect(readGrpcError(new Error('socket hang up'))).to.deep.equal({
      code: grpc.status.UNKNOWN,
      message: 'socket hang up',
    });
    expect(readGrpcError(undefined)).to.deep.equal({ code: grpc.status.UNKNOWN, message: 'call failed' });
    expect(readGrpcError(null).code).to.equal(grpc.status.UNKNOWN);
    expect(readGrpcError({ code: grpc.status.INTERNAL, details: 'x', metadata: { not: 'metadata' } })).to.deep.equal({
      code: grpc.status.INTERNAL,
      message: 'x',
    });
  });

  describe('through a real gRPC call on 127.0.0.1', () => {
    const passthrough = (b: Buffer) => b;
    const definition: grpc.ServiceDefinition = {
      fail: {
        path: '/webutil.test.Errors/Fail',
        requestStream: false,
        responseStream: false,
        requestSerialize: passthrough,
        requestDeserialize: passthrough,
        responseSerialize: passthrough,
        responseDeserialize: passthrough,
      },
    };
    let server: grpc.Server;
    let client: grpc.Client & Record<string, (req: Buffer, cb: (err: grpc.ServiceError | null) => void) => void>;

    before(async () => {
      server = new grpc.Server();
      server.addService(definition, {
        fail: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
          const which = call.request.toString();
          callback(
            toGrpcError(
              which === 'plain' ? new Error('stack trace with secrets') : notFound('JOB_NOT_FOUND', 'no such job'),
            ),
          );
        },
      });
      const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
          err ? reject(err) : resolve(p),
        ),
      );
      const Client = grpc.makeGenericClientConstructor(definition, 'Errors');
      client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as typeof client;
    });
    after(async () => {
      client?.close();
      await new Promise<void>((resolve) => (server ? server.tryShutdown(() => resolve()) : resolve()));
    });

    const call = (body: string) =>
      new Promise<grpc.ServiceError>((resolve, reject) =>
        client.fail!(Buffer.from(body), (err) =>
          err ? resolve(err) : reject(new Error('the call should have failed')),
        ),
      );

    it('delivers the reason of a ServiceError to the client', async () => {
      const err = await call('typed');
      expect(readGrpcError(err)).to.deep.equal({
        code: grpc.status.NOT_FOUND,
        message: 'no such job',
        reason: 'JOB_NOT_FOUND',
      });
    });

    it('delivers INTERNAL without the message of a plain Error', async () => {
      const err = await call('plain');
      const failure = readGrpcError(err);
      expect(failure).to.deep.equal({ code: grpc.status.INTERNAL, message: 'internal error', reason: 'INTERNAL' });
      expect(err.message).to.not.include('secrets');
    });
  });
});
