import { setImmediate as nextTurn } from 'node:timers/promises';
import { header, type SafeResponse } from '@webutil/kit';

/**
 * Lets the event loop run (timers, sockets, other requests). Awaiting a stream whose chunks are
 * already buffered never leaves the microtask queue, so a loop over many fast pages would
 * otherwise hold the loop for as long as all of them take.
 */
export { nextTurn };

/** What a page body is fed to: decoded text chunks, until it has had enough. */
export interface TextSink {
  write(chunk: string): void;
  end(): void;
  /** True once the sink wants no more text (full, or the rest would not be read anyway). */
  readonly done?: boolean;
}

/**
 * Feeds the decoded body through the sink, stopping as soon as it is done, and returns the first
 * `sampleChars` characters of the text (what soft-404 and bot-wall recognition look at).
 */
export async function parseStream(res: SafeResponse, sink: TextSink, sampleChars = 0): Promise<string> {
  const decoder = new TextDecoder(charsetOf(header(res.headers, 'content-type')));
  let sample = '';
  const feed = (text: string) => {
    if (sample.length < sampleChars) sample += text.slice(0, sampleChars - sample.length);
    sink.write(text);
  };
  for await (const chunk of res.body) {
    feed(decoder.decode(chunk, { stream: true }));
    if (sink.done) {
      await res.dump();
      break;
    }
    await nextTurn();
  }
  feed(decoder.decode());
  sink.end();
  return sample;
}

function charsetOf(contentType: string | undefined): string {
  const label = /charset=["']?([\w-]+)/i.exec(contentType ?? '')?.[1];
  if (!label) return 'utf-8';
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return 'utf-8';
  }
}
