/** A file the API answered (a screenshot, a PDF, an export, a converted bookmark file): bytes or a stream. */

export class WebutilFile {
  constructor(private readonly response: Response) {}

  /** The file's content type, e.g. image/png, text/csv. */
  get contentType(): string {
    return this.response.headers.get('content-type')?.split(';')[0]?.trim() ?? 'application/octet-stream';
  }

  /** The name the API gave it (Content-Disposition), if any. */
  get fileName(): string | undefined {
    const disposition = this.response.headers.get('content-disposition') ?? '';
    const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1];
    if (encoded) return decodeURIComponent(encoded);
    return /filename="?([^";]+)"?/i.exec(disposition)?.[1];
  }

  /** The answer's headers (a render's fields as X- headers, the credits left). */
  get headers(): Headers {
    return this.response.headers;
  }

  /** The bytes as they arrive; read once, instead of bytes() or text(). */
  stream(): ReadableStream<Uint8Array> {
    if (!this.response.body) throw new Error('the file has no body');
    return this.response.body;
  }

  /** The whole file. */
  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(await this.response.arrayBuffer());
  }

  /** The whole file as UTF-8 text (exports, XBEL, HTML). */
  text(): Promise<string> {
    return this.response.text();
  }
}
