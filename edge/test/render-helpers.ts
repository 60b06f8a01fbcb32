import { startFixtureDns } from '@webutil/scripts/fixture-dns';
import { freePort } from '@webutil/scripts/local-stack';
import { startTestStack, type TestStack, type TestStackOptions } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import sharp from 'sharp';
import { creditsHeader, type Envelope, json } from './billing-helpers.js';
import { post } from './crawl-helpers.js';

export type RenderRoute = 'screenshot' | 'url-to-pdf';

export interface RenderStack extends TestStack {
  /** The render service's Prometheus endpoint. */
  metricsUrl: string;
  /** The DNS server the render service's proxy asks (names the tests define). */
  dns: Awaited<ReturnType<typeof startFixtureDns>>;
}

/** A test stack whose render service asks a fixture DNS server and exposes its metrics. */
export async function startRenderStack(options: TestStackOptions & { render?: Record<string, string> } = {}) {
  const dns = await startFixtureDns();
  const metricsPort = await freePort();
  try {
    const stack = await startTestStack({
      ...options,
      envFor: {
        ...options.envFor,
        render: { RENDER_DNS_SERVERS: dns.server, METRICS_PORT: String(metricsPort), ...options.render },
      },
    });
    const stopStack = stack.stop;
    return Object.assign(stack, {
      metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
      dns,
      stop: async () => {
        await stopStack();
        await dns.close();
      },
    }) satisfies RenderStack;
  } catch (err) {
    await dns.close();
    throw err;
  }
}

export interface RenderCall {
  res: Response;
  body: Envelope & Record<string, any>;
  credits: number;
}

export async function render(stack: TestStack, route: RenderRoute, body: unknown): Promise<RenderCall> {
  const res = await stack.api(`/v1/${route}`, post(body));
  return { res, body: (await json(res)) as RenderCall['body'], credits: creditsHeader(res) };
}

/** A render that must fail with this status and code, in the failure envelope. */
export function expectRenderFailure(call: RenderCall, status: number, code: string): string {
  expect(call.res.status, JSON.stringify(call.body)).to.equal(status);
  expect(call.body).to.have.all.keys('success', 'error');
  expect(call.body.success).to.equal(false);
  expect(call.body.error?.code).to.equal(code);
  expect(call.body.error?.message).to.be.a('string').and.not.be.empty;
  return call.body.error!.message;
}

/** A render that must succeed; returns the response and the result file. */
export async function rendered(stack: TestStack, route: RenderRoute, body: unknown) {
  const call = await render(stack, route, body);
  expect(call.res.status, JSON.stringify(call.body)).to.equal(200);
  expect(call.body.success).to.equal(true);
  const file = await download(stack, call.body.filename);
  expect(file.length).to.equal(call.body.sizeBytes);
  return { ...call, file };
}

/** GET /api/uploads/<filename>, without a credential; checks the file's headers. */
export async function download(stack: TestStack, filename: string): Promise<Buffer> {
  const res = await stack.api(`/api/uploads/${filename}`, { anonymous: true });
  expect(res.status, `download ${filename}`).to.equal(200);
  const type = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp', pdf: 'application/pdf' }[
    filename.split('.').pop() ?? ''
  ];
  expect(res.headers.get('content-type')).to.equal(type);
  const bytes = Buffer.from(await res.arrayBuffer());
  expect(res.headers.get('content-length')).to.equal(String(bytes.length));
  return bytes;
}

/** Server-Timing as stage -> ms. */
export function serverTiming(res: Response): Record<string, number> {
  const header = res.headers.get('server-timing') ?? '';
  return Object.fromEntries(
    header.split(',').map((part) => {
      const [name, dur] = part.trim().split(';dur=');
      return [name, Number(dur)];
    }),
  );
}

/** One pixel of an image as [r, g, b]. */
export async function pixel(image: Buffer, x: number, y: number): Promise<number[]> {
  const { data } = await sharp(image)
    .extract({ left: x, top: y, width: 1, height: 1 })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return [...data];
}

/** The value of one metric (without labels) from a Prometheus text exposition. */
export async function metric(stack: RenderStack, name: string): Promise<number> {
  const text = await (await fetch(stack.metricsUrl)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  expect(line, `${name} in the render service's metrics`).to.be.a('string');
  return Number(line!.split(' ')[1]);
}

/** No page and no browser context open in the render service, as Chromium reports them. */
export async function expectNoOpenPages(stack: RenderStack): Promise<void> {
  const pages = await metric(stack, 'webutil_render_open_pages');
  const contexts = await metric(stack, 'webutil_render_open_contexts');
  expect({ pages, contexts }).to.deep.equal({ pages: 0, contexts: 0 });
}

/** A run of text in a PDF: its page (from 1), baseline origin in points from the bottom left, and height. */
export interface PdfTextItem {
  page: number;
  str: string;
  x: number;
  y: number;
  height: number;
}

/** A PDF's page count, first page size (points), all its text, and each text item with its place. */
export async function readPdf(bytes: Buffer) {
  const doc = await getDocument({ data: new Uint8Array(bytes), verbosity: 0 }).promise;
  const first = await doc.getPage(1);
  const [, , width, height] = first.view as number[];
  let text = '';
  const items: PdfTextItem[] = [];
  for (let i = 1; i <= doc.numPages; i++) {
    const content = await (await doc.getPage(i)).getTextContent();
    text += content.items.map((item) => ('str' in item ? item.str : '')).join(' ');
    for (const item of content.items) {
      if ('str' in item && item.str.trim()) {
        items.push({ page: i, str: item.str, x: item.transform[4], y: item.transform[5], height: item.height });
      }
    }
  }
  const outline = ((await doc.getOutline()) ?? []).map((entry) => entry.title);
  const pages = doc.numPages;
  await doc.destroy();
  return { pages, width: width!, height: height!, text, items, outline };
}

interface PdfCanvas {
  canvas: unknown;
  context: { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
}

/** The colour [r, g, b] at the middle of a PDF's first page, rasterised as a viewer would show it. */
export async function pdfPageColour(bytes: Buffer): Promise<number[]> {
  const doc = await getDocument({ data: new Uint8Array(bytes), verbosity: 0 }).promise;
  const page = await doc.getPage(1);
  const viewport = page.getViewport({ scale: 0.25 });
  const { canvas, context } = (doc.canvasFactory as { create(w: number, h: number): PdfCanvas }).create(
    Math.ceil(viewport.width),
    Math.ceil(viewport.height),
  );
  await page.render({ canvas: canvas as never, canvasContext: context as never, viewport }).promise;
  const { data } = context.getImageData(Math.floor(viewport.width / 2), Math.floor(viewport.height / 2), 1, 1);
  await doc.destroy();
  return [...data].slice(0, 3);
}
