import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { bind, createLogger, notFound } from '@webutil/kit';
import { type ArtifactStore, DiskArtifactStore } from '@webutil/kit/artifacts';
import { RenderServiceService } from '@webutil/proto/webutil/render/v1/render';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';

/**
 * The edge's download rows, through the REST edge against a real gRPC server that serves the
 * render contract's ReadArtifact from a disk artifact store (the render service's own tests cover
 * its rendering; this covers how the edge streams any stored file).
 */
describe('downloads, through the REST edge', function () {
  this.timeout(60_000);
  let dir: string;
  let store: ArtifactStore;
  let server: grpc.Server;
  let stack: TestStack;
  /** Each ReadArtifact's end: how it finished, so a test can see a cancel arrive. */
  const reads: { name: string; ended: Promise<'completed' | 'cancelled'> }[] = [];

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'downloads-'));
    store = await DiskArtifactStore.open(dir);
    server = new grpc.Server();
    const binding = bind(
      RenderServiceService,
      {
        readArtifact: async (request, ctx, send) => {
          let finish: (how: 'completed' | 'cancelled') => void = () => undefined;
          reads.push({ name: request.filename, ended: new Promise((resolve) => (finish = resolve)) });
          const opened = await store.open(request.filename);
          if (!opened) throw notFound('FILE_NOT_FOUND', 'no such file: rendered files are kept about 5 minutes');
          const { info, body } = opened;
          try {
            await send({ contentType: info.contentType, sizeBytes: String(info.sizeBytes), chunk: Buffer.alloc(0) });
            for await (const chunk of body) await send({ contentType: '', sizeBytes: '0', chunk: Buffer.from(chunk) });
          } finally {
            finish(ctx.signal.aborted ? 'cancelled' : 'completed');
          }
        },
      },
      createLogger('render-stand-in', 'warn'),
    );
    server.addService(binding.definition, binding.implementation);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    stack = await startTestStack({ envFor: { edge: { RENDER_ADDR: `127.0.0.1:${port}` } } });
  });

  after(async () => {
    await stack?.stop();
    server?.forceShutdown();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams a stored file with its type, length and inline name, free and without a credential', async () => {
    const bytes = Buffer.from(Array.from({ length: 3_000_000 }, (_, i) => (i * 7) % 256));
    const { name } = await store.put({ body: bytes, extension: 'png', contentType: 'image/png', ttlMs: 60_000 });
    const res = await stack.api(`/api/uploads/${name}`, { anonymous: true });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/png');
    expect(res.headers.get('content-length')).to.equal(String(bytes.length));
    expect(res.headers.get('content-disposition')).to.equal(`inline; filename="${name}"`);
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.headers.get('cache-control')).to.equal('private, no-store');
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).to.equal(true);

    const before = Number((await stack.api(`/api/uploads/${name}`)).headers.get('x-credits-remaining'));
    const again = await stack.api(`/api/uploads/${name}`);
    await again.arrayBuffer();
    expect(Number(again.headers.get('x-credits-remaining'))).to.equal(before);
  });

  it('answers an unknown, expired or escaping name with 404 in the envelope', async () => {
    for (const name of [
      'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.png',
      '..%2F..%2Fetc%2Fpasswd',
      '%2e%2e%2fx.png',
      'x.png%00',
    ]) {
      const res = await stack.api(`/api/uploads/${name}`);
      expect(res.status, name).to.equal(404);
      const body = (await res.json()) as { error: { code: string } };
      expect(body.error.code, name).to.equal('file_not_found');
    }
  });

  it('cancels the service’s read when the client leaves midway', async () => {
    const big = Buffer.alloc(64 * 1024 * 1024, 1);
    const { name } = await store.put({ body: big, extension: 'pdf', contentType: 'application/pdf', ttlMs: 60_000 });
    const controller = new AbortController();
    const res = await stack.api(`/api/uploads/${name}`, { signal: controller.signal });
    expect(res.status).to.equal(200);
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const read = reads.findLast((r) => r.name === name);
    expect(await read!.ended).to.equal('cancelled');
  });
});
