import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { bodyParser } from '@koa/bodyparser';
import type { Logger } from '@webutil/kit';
import Koa from 'koa';
import { clientAddress } from './caller.js';
import type { Clients } from './clients.js';
import { downloadHandler } from './downloads.js';
import { HttpError } from './envelope.js';
import { continueBody } from './http-server.js';
import type { Metering } from './metering/index.js';
import { creditsHeader } from './middleware/credits-header.js';
import { errorEnvelope } from './middleware/errors.js';
import { requestMetrics } from './middleware/metrics.js';
import { requestId } from './middleware/request-id.js';
import { UploadsInFlight } from './multipart.js';
import { OPENAPI_PATH, openApiDocument } from './openapi.js';
import { handler } from './pipeline.js';
import { readRawBody } from './raw-body.js';
import { exportRoutes, PREFIXES, takesJsonBody } from './route-spec.js';
import { EdgeRouter } from './router.js';
import { downloads, routes } from './routes.js';
import {
  assetHandler,
  contentSecurityPolicy,
  DOWNLOAD_CSP,
  loadWebsite,
  notFoundPage,
  PAGE_ALIASES,
  PAGE_PATHS,
  rootFileHandler,
  securityHeaders,
  shellHandler,
  withCsp,
} from './website.js';

export interface AppOptions {
  clients: Clients;
  /** Authorizations, settlements and the callers' views (billing's side of every route). */
  metering: Metering;
  log: Logger;
  jsonLimit: string;
  /** CIDRs of reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed. */
  trustedProxies: readonly string[];
  /** Where clients reach this API (absolute links start with it), e.g. https://api.example.com. */
  publicBaseUrl: string;
  /** The built website (edge/dist/web); default: beside this file. */
  webDir?: string;
  /** The bot challenge is Cloudflare Turnstile (billing has its keys): the pages load its widget. */
  turnstile?: boolean;
  /** Uploads one client network may have in flight (read, or being served); default 2. */
  maxUploadsPerClient?: number;
}

export function createApp({
  clients,
  metering,
  log,
  jsonLimit,
  trustedProxies,
  publicBaseUrl,
  webDir = fileURLToPath(new URL('./web/', import.meta.url)),
  turnstile = false,
  maxUploadsPerClient = 2,
}: AppOptions): Koa {
  const app = new Koa();
  app.context.publicBaseUrl = publicBaseUrl.replace(/\/+$/, '');
  app.context.uploadsInFlight = new UploadsInFlight(maxUploadsPerClient);
  app.proxy = false;
  const router = new EdgeRouter();
  // JSON bodies are read by the routes that take one, so a wrong method is a 405 whatever its body.
  const parseJson = bodyParser({
    enableTypes: ['json'],
    jsonLimit,
    onError: (err) => {
      const status = (err as { status?: number }).status;
      if (status === 413) throw new HttpError(413, 'payload_too_large', `the JSON body is larger than ${jsonLimit}`);
      throw new HttpError(400, 'invalid_json', 'the request body is not valid JSON');
    },
  });
  // A client that waits for `100 Continue` is asked for its JSON body once its route is found.
  const jsonBody: Koa.Middleware = (ctx, next) => {
    continueBody(ctx.req, ctx.res);
    return parseJson(ctx, next);
  };
  // Probes for the local runner and Kubernetes: the process is up and serving HTTP.
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  // The contract itself: free, no credential, not counted against any rate.
  const contract = JSON.stringify(openApiDocument(routes, downloads));
  // Gzipped once: the website's pages read the document (hundreds of KB) on every first visit.
  const contractGzip = gzipSync(contract, { level: 9 });
  for (const prefix of PREFIXES) {
    router.get(`${prefix}${OPENAPI_PATH}`, (ctx) => {
      ctx.type = 'application/json';
      ctx.vary('Accept-Encoding');
      if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
        ctx.set('Content-Encoding', 'gzip');
        ctx.body = contractGzip;
      } else {
        ctx.body = contract;
      }
    });
  }
  for (const spec of [...routes, ...exportRoutes(routes)]) {
    const middleware = handler(spec, clients, metering, log);
    // An upload reads its own multipart body; a raw body (a signed payload) is kept as sent.
    const chain = spec.rawBody
      ? [readRawBody(spec.rawBody), middleware]
      : takesJsonBody(spec) && !spec.upload
        ? [jsonBody, middleware]
        : middleware;
    for (const prefix of PREFIXES) {
      const path = `${prefix}${spec.path}`;
      router.register(path, [spec.method], chain, { name: path });
    }
  }
  const site = loadWebsite(webDir);
  const pageCsp = contentSecurityPolicy({ turnstile });
  if (site) {
    const csp = withCsp(pageCsp);
    for (const page of PAGE_PATHS) router.get(page, csp, shellHandler(site.shell));
    for (const [assetPath, asset] of site.assets) router.get(assetPath, csp, assetHandler(asset));
    for (const [filePath, file] of site.rootFiles) router.get(filePath, csp, rootFileHandler(file));
    for (const [alias, page] of Object.entries(PAGE_ALIASES))
      router.get(alias, (ctx) => {
        ctx.status = 301;
        ctx.redirect(page);
      });
  } else {
    log.warn({ webDir }, 'no website build found; serving the API only');
  }
  const downloadCsp = withCsp(DOWNLOAD_CSP);
  for (const spec of downloads) {
    const middleware = downloadHandler(spec, clients, metering, log);
    for (const path of spec.paths) router.register(path, ['GET'], [downloadCsp, middleware], { name: path });
  }
  app.use(requestMetrics());
  app.use(requestId());
  app.use(clientAddress(trustedProxies));
  app.use(securityHeaders());
  app.use(creditsHeader((ctx) => metering.peekCredits(ctx)));
  app.use(errorEnvelope(log));
  if (site) app.use(notFoundPage(site.shell, pageCsp));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
