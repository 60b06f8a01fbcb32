/** A receiver on 127.0.0.1 for alert tests: records every request, answers each path's queued statuses, then 200. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export class AlertReceiver {
  readonly received: Received[] = [];
  /** Statuses to answer next, per path (then 200). */
  readonly answers = new Map<string, number[]>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<AlertReceiver> {
    let receiver: AlertReceiver | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        receiver?.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString() });
        res.writeHead(receiver?.answers.get(path)?.shift() ?? 200).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new AlertReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  on(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Waits until `path` has had `count` requests. */
  async waitFor(path: string, count = 1, waitMs = 20_000): Promise<Received[]> {
    const deadline = Date.now() + waitMs;
    while (this.on(path).length < count) {
      if (Date.now() > deadline) throw new Error(`${path} had ${this.on(path).length} of ${count} requests`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.on(path);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
