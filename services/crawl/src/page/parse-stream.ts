import type { SafeResponse } from '@webutil/kit';
import { header } from '@webutil/kit/http-header';

/** Pieces of work waiting for their turn of the event loop, oldest first. */
const waiting: (() => void)[] = [];
let turnScheduled = false;

/**
 * Lets the event loop run (timers, sockets, other requests) before the caller's next piece of
 * work, one waiting piece per turn of the loop, whoever waits. Awaiting a stream whose chunks are
 * already buffered never leaves the microtask queue; and a plain setImmediate per piece would run
 * every piece queued before a turn back to back in that turn: with four hostile crawls parsing a
 * hundred pages at once, no timer or socket was served for a long block (docs/benchmarks.md,
 * hostile site). One per turn, the loop waits
 * for one chunk's work at most.
 */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!turnScheduled) {
      turnScheduled = true;
      setImmediate(takeTurn);
    }
  });
}

function takeTurn(): void {
  const resume = waiting.shift();
  // Queued now, the next turn comes after the loop has polled timers and sockets again.
  if (waiting.length > 0) setImmediate(takeTurn);
  else turnScheduled = false;
  resume?.();
}

/** What a page body is fed to: decoded text chunks, until it has had enough. */
export interface TextSink {
  write(chunk: string): void;
  /** The text is all there (a sink that renders it first, Markdown, finishes asynchronously). */
  end(): void | Promise<void>;
  /** True once the sink wants no more text (full, or the rest would not be read anyway). */
  readonly done?: boolean;
}

/**
 * Text parsed in one turn of the event loop at most: 16 K characters of dense anchors are
 * thousands of links to resolve; a socket's whole 64 KB chunk blocked the loop far too long
 * (docs/decisions/0028-event-loop-turns.md).
 */
const PIECE_CHARS = 16 * 1024;

/**
 * Feeds the decoded body through the sink, stopping as soon as it is done, and returns the first
 * `sampleChars` characters of the text (what soft-404 and bot-wall recognition look at). Each
 * piece waits for a turn of its own, the first too: fed where its chunk arrived, the first
 * pieces of every page read at once ran back to back in one turn.
 */
export async function parseStream(
  res: Pick<SafeResponse, 'headers' | 'body' | 'dump'>,
  sink: TextSink,
  sampleChars = 0,
): Promise<string> {
  const decoder = new TextDecoder(charsetOf(header(res.headers, 'content-type')));
  let sample = '';
  const feed = (text: string) => {
    if (sample.length < sampleChars) sample += text.slice(0, sampleChars - sample.length);
    sink.write(text);
  };
  for await (const chunk of res.body) {
    const text = decoder.decode(chunk, { stream: true });
    for (let at = 0; at < text.length && !sink.done; ) {
      const end = pieceEnd(text, at);
      await nextTurn();
      feed(text.slice(at, end));
      at = end;
    }
    if (sink.done) {
      await res.dump();
      break;
    }
  }
  feed(decoder.decode());
  await sink.end();
  return sample;
}

/** Where the piece starting at `at` ends: PIECE_CHARS on, never between a surrogate pair's halves. */
function pieceEnd(text: string, at: number): number {
  const end = Math.min(text.length, at + PIECE_CHARS);
  const last = text.charCodeAt(end - 1);
  return end < text.length && last >= 0xd800 && last <= 0xdbff ? end + 1 : end;
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
