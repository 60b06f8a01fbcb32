import { randomBytes } from 'node:crypto';

/**
 * The artifact store port: short-lived result files (rendered images and PDFs, converted bookmark
 * files) under unguessable names, readable by any replica of the service that wrote them. One
 * conformance suite holds every adapter to the same behaviour.
 */
export interface ArtifactStore {
  /** Stores the bytes under a new unguessable name. A body that fails midway leaves nothing behind. */
  put(artifact: NewArtifact): Promise<ArtifactInfo>;
  /** The artifact's facts, or undefined when it is absent, expired or not a name this store issues. */
  stat(name: string): Promise<ArtifactInfo | undefined>;
  /** The artifact's facts and bytes, or undefined as for stat. */
  open(name: string): Promise<OpenArtifact | undefined>;
  /** The artifact stored most recently with this cache key, while it lives. */
  findCached(cacheKey: string): Promise<ArtifactInfo | undefined>;
  /** Deletes the artifact now, before its lifetime ends (nothing will read it); an unknown name is no error. */
  delete(name: string): Promise<void>;
  /** Deletes every artifact whose lifetime has ended; returns how many. */
  sweep(): Promise<number>;
  close(): Promise<void>;
}

export interface NewArtifact {
  body: Uint8Array | AsyncIterable<Uint8Array>;
  /** File extension of the stored name, without the dot: png, jpg, webp, pdf, html, xbel. */
  extension: string;
  contentType: string;
  ttlMs: number;
  /** Suggested file name for a download (Content-Disposition). */
  downloadName?: string;
  /** Lets a later identical request find this artifact (findCached). */
  cacheKey?: string;
  /** Small facts about the result that a cache hit must answer with too (e.g. a screenshot was clipped). */
  attributes?: Record<string, string>;
}

export interface ArtifactInfo {
  name: string;
  contentType: string;
  sizeBytes: number;
  /** Epoch milliseconds: when it was stored, and when its lifetime ends. */
  createdAt: number;
  expiresAt: number;
  downloadName?: string;
  attributes?: Record<string, string>;
}

export interface OpenArtifact {
  info: ArtifactInfo;
  body: AsyncIterable<Uint8Array>;
}

/** 192 random bits, base64url, then the extension: nothing to guess, nothing to escape. */
const NAME = /^[A-Za-z0-9_-]{32}\.[a-z0-9]{1,8}$/;
const EXTENSION = /^[a-z0-9]{1,8}$/;

export function newArtifactName(extension: string): string {
  if (!EXTENSION.test(extension)) throw new Error(`not an artifact extension: ${extension}`);
  return `${randomBytes(24).toString('base64url')}.${extension}`;
}

/** True only for names newArtifactName makes, so `..`, slashes and encoded forms never reach a store. */
export function isArtifactName(name: string): boolean {
  return NAME.test(name);
}

/** A body given as bytes or as a stream, read as a stream. */
export async function* chunksOf(body: Uint8Array | AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  if (body instanceof Uint8Array) yield body;
  else yield* body;
}
