import type { Context } from 'koa';

declare module 'koa' {
  interface DefaultContext {
    /** PUBLIC_BASE_URL without a trailing slash: where clients reach this API. */
    publicBaseUrl: string;
  }
}

/**
 * An absolute URL the edge hands out (a download link): the configured public base, never the
 * request's Host header, which the client chooses.
 */
export const publicUrl = (ctx: Context, path: string): string => `${ctx.publicBaseUrl}${path}`;
