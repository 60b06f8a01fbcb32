/** Replies that name a stored file: the spec's answer carries the absolute link to it. */
import type { Context } from 'koa';
import { publicUrl } from '../../public-url.js';

/**
 * Presents a reply with its `downloadUrl`: the public base, /v1, the download route's `base`
 * (the same constant its row in the download table is built from) and the stored name.
 */
export const withDownloadUrl =
  (base: string) =>
  <R extends { storedName: string }>(reply: R, ctx: Context) => ({
    ...reply,
    downloadUrl: publicUrl(ctx, `/v1${base}/${reply.storedName}`),
  });
