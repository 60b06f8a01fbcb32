/**
 * An HTTP/1.0 server whose every answer is close-delimited: `HTTP/1.0 200 OK`, no Content-Length,
 * the body, then FIN. With a large body and a client that reads slower than the socket fills, this
 * is the exchange that crashed undici 7 (`assert(!this.paused)` in Parser.finish when the socket
 * ended while a body waited under back-pressure: docs/decisions/0301-undici-paused-parser-patch.md).
 *
 *   /page            1.3 MB of HTML: a link to /before, an inline base64 image of ~1.3 MB, a link
 *                    to /after; written at once, then the connection closed
 *   /slow            the same page in 64 KiB pieces, one every `slowGapMs`
 *   /paused          the same page: half of it, a pause of `pauseMs`, the rest, then close
 *   anything else    a small close-delimited 404 page
 *
 * Any method answers (a HEAD gets the head only). Each request's path is appended to `requests`.
 */
import net from 'node:net';

export interface CloseDelimitedSite {
  origin: string;
  url(path: string): string;
  requests: string[];
  /** The HTML every page answers with. */
  page: string;
  close(): Promise<void>;
}

export interface CloseDelimitedOptions {
  /** Bytes of base64 image data inside the page (default 1.3 MB). */
  imageBytes?: number;
  slowGapMs?: number;
  pauseMs?: number;
}

const PIECE = 64 * 1024;

export async function startCloseDelimitedSite(options: CloseDelimitedOptions = {}): Promise<CloseDelimitedSite> {
  const imageBytes = options.imageBytes ?? 1_300_000;
  const slowGapMs = options.slowGapMs ?? 5;
  const pauseMs = options.pauseMs ?? 300;
  const base64 = 'iVBORw0KGgo'.repeat(Math.ceil(imageBytes / 11)).slice(0, imageBytes);
  const page =
    '<!doctype html><html><head><title>Inline images</title></head><body><a href="/before">before</a>' +
    `<img alt="inline" src="data:image/png;base64,${base64}">` +
    '<a href="/after">after</a></body></html>';
  const body = Buffer.from(page);
  const requests: string[] = [];
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = '';
    const onData = (data: Buffer) => {
      head += data.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      const [method = 'GET', path = '/'] = head.split('\r\n', 1)[0]?.split(' ') ?? [];
      requests.push(path);
      const known = path === '/page' || path === '/slow' || path === '/paused';
      const content = known ? body : Buffer.from('<html><body>not found</body></html>');
      socket.write(`HTTP/1.0 ${known ? '200 OK' : '404 Not Found'}\r\nContent-Type: text/html\r\n\r\n`);
      if (method === 'HEAD') socket.end();
      else if (path === '/slow') writeSlowly(socket, content, 0);
      else if (path === '/paused') {
        const half = Math.floor(content.length / 2);
        socket.write(content.subarray(0, half));
        later(pauseMs, () => socket.end(content.subarray(half)));
      } else socket.end(content);
    };
    socket.on('data', onData);
  });
  const writeSlowly = (socket: net.Socket, content: Buffer, at: number) => {
    if (socket.destroyed) return;
    const end = Math.min(content.length, at + PIECE);
    if (end === content.length) {
      socket.end(content.subarray(at));
      return;
    }
    socket.write(content.subarray(at, end));
    later(slowGapMs, () => writeSlowly(socket, content, end));
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    requests,
    page,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
