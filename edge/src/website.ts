/**
 * The website: the pages' shell and the hashed assets esbuild wrote to dist/web (edge/web/build.mjs),
 * served from memory under the pages' CSP. The pages call the API through /api/v1 on this
 * same origin, so the CSP can allow 'self' only.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Context, Middleware, Next } from 'koa';

/** Where Cloudflare's Turnstile widget loads from (its script and its frame). */
export const TURNSTILE_ORIGIN = 'https://challenges.cloudflare.com';

/**
 * No inline scripts or styles anywhere; nothing may frame the site. With Turnstile configured, its
 * widget's script and frame (and only those) come from Cloudflare.
 */
export function contentSecurityPolicy(options: { turnstile: boolean }): string {
  const widget = options.turnstile ? ` ${TURNSTILE_ORIGIN}` : '';
  return [
    "default-src 'self'",
    `script-src 'self'${widget}`,
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    `frame-src 'self'${widget}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Paths that show the single-page shell; the page's router picks the view. */
export const PAGE_PATHS = [
  '/',
  '/pricing',
  '/sign-in',
  '/sign-up',
  '/account',
  '/docs',
  '/play/:operation',
  '/monitors',
  '/status/:slug',
  '/site-audit/:job_id',
  '/verify-email',
  '/reset-password',
];

/** Names visitors type for pages that have another: a permanent redirect. */
export const PAGE_ALIASES: Record<string, string> = {
  '/login': '/sign-in',
  '/signup': '/sign-up',
  '/register': '/sign-up',
};

/** The site's own files at the root (edge/web/public), and the names browsers ask for them by. */
const ROOT_ALIASES: Record<string, string> = { '/favicon.ico': '/favicon.svg' };

/**
 * Browser features no page of the site uses, refused for it and anything it frames (the PDF
 * preview, the bot challenge's widget).
 */
export const PERMISSIONS_POLICY = [
  'accelerometer=()',
  'camera=()',
  'geolocation=()',
  'gyroscope=()',
  'magnetometer=()',
  'microphone=()',
  'payment=()',
  'usb=()',
].join(', ');

interface Asset {
  body: Buffer;
  gzip?: Buffer;
  type: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

function load(dir: string, name: string): Asset {
  const file = path.join(dir, name);
  return {
    body: readFileSync(file),
    gzip: existsSync(`${file}.gz`) ? readFileSync(`${file}.gz`) : undefined,
    type: TYPES[path.extname(name)] ?? 'application/octet-stream',
  };
}

const filesOf = (dir: string, prefix: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => !name.endsWith('.gz'))
        .map((name) => [`${prefix}${name}`, load(dir, name)] as const)
    : [];

/** The built site, or undefined when the build has not produced one (the API still works). */
export function loadWebsite(
  dir: string,
): { shell: Asset; assets: Map<string, Asset>; rootFiles: Map<string, Asset> } | undefined {
  if (!existsSync(path.join(dir, 'index.html'))) return undefined;
  const assets = new Map(filesOf(path.join(dir, 'assets'), '/assets/'));
  const rootFiles = new Map(filesOf(path.join(dir, 'public'), '/'));
  for (const [alias, name] of Object.entries(ROOT_ALIASES)) {
    const file = rootFiles.get(name);
    if (file) rootFiles.set(alias, file);
  }
  return { shell: load(dir, 'index.html'), assets, rootFiles };
}

/** Paths of the API (its JSON 404 stays); any other unknown GET is a page: the site's 404 page. */
const API_PATH = /^\/(v1|api)(\/|$)|^\/healthz$|^\/assets\//;

/**
 * Unknown pages: the shell with status 404 (its router shows "Page not found"), for GET and HEAD
 * outside the API. Runs inside the error envelope, which would make any 404 JSON.
 */
export const notFoundPage = (shell: Asset, csp: string): Middleware => {
  const page = async (ctx: Context, next: Next) => {
    await next();
    if (ctx.status !== 404 || ctx.body != null) return;
    ctx.set('Content-Security-Policy', csp);
    await send(shell, 'no-cache')(ctx, async () => undefined);
    ctx.status = 404;
  };
  // The API's requests (and any other method) never get the page: they pass without waiting here.
  return (ctx, next) =>
    (ctx.method === 'GET' || ctx.method === 'HEAD') && !API_PATH.test(ctx.path) ? page(ctx, next) : next();
};

/**
 * What the API's own answers (JSON, downloads, 404s) may do if a browser renders them: nothing
 * (no scripts, styles or frames of their own), and none may be framed.
 */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
/** A download may be shown inside the site's own pages (the PDF preview frame), nowhere else. */
export const DOWNLOAD_CSP = "default-src 'none'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'";

/**
 * Security headers on every response of the origin; HSTS only when the request came over TLS
 * (clientAddress has set ctx.state.https). Pages and downloads replace the CSP with their own.
 */
export const securityHeaders = (): Middleware => (ctx, next) => {
  // Node's setHeader itself: Koa's ctx.set allocates two arrays per call, on every response.
  const { res } = ctx;
  res.setHeader('Content-Security-Policy', API_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Permissions-Policy', PERMISSIONS_POLICY);
  if (ctx.state.https) res.setHeader('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
  return next();
};

/** A route's own CSP in place of the API's. */
export const withCsp =
  (csp: string): Middleware =>
  (ctx, next) => {
    ctx.set('Content-Security-Policy', csp);
    return next();
  };

function send(asset: Asset, cacheControl: string): Middleware {
  return (ctx) => {
    ctx.set('Cache-Control', cacheControl);
    ctx.vary('Accept-Encoding');
    ctx.type = asset.type;
    if (asset.gzip && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = asset.gzip;
    } else {
      ctx.body = asset.body;
    }
  };
}

/** The shell is revalidated each visit (it names the current assets); hashed assets never change. */
export const rootFileHandler = (asset: Asset) => send(asset, 'public, max-age=86400');
export const shellHandler = (shell: Asset) => send(shell, 'no-cache');
export const assetHandler = (asset: Asset) => send(asset, 'public, max-age=31536000, immutable');
