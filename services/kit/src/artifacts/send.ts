import type { OpenArtifact } from './store.js';

/** A download RPC's message: the file's facts in the first, bytes in every one. */
export interface ArtifactMessage {
  contentType: string;
  sizeBytes: string;
  chunk: Buffer;
}

/** Streams a stored file as a download RPC's messages (an empty file still sends its facts). */
export async function sendArtifact(
  found: OpenArtifact,
  send: (message: ArtifactMessage) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  const facts = { contentType: found.info.contentType, sizeBytes: String(found.info.sizeBytes) };
  let first = true;
  for await (const chunk of found.body) {
    if (signal.aborted) break;
    await send({
      ...(first ? facts : { contentType: '', sizeBytes: '0' }),
      chunk: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength),
    });
    first = false;
  }
  if (first) await send({ ...facts, chunk: Buffer.alloc(0) });
}
