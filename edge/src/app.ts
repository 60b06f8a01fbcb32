import { bodyParser } from '@koa/bodyparser';
import { Router } from '@koa/router';
import type { Logger } from '@webutil/kit';
import Koa from 'koa';
import { clientAddress } from './caller.js';
import type { Clients } from './clients.js';
import { HttpError } from './envelope.js';
import { creditsHeader } from './middleware/credits-header.js';
import { errorEnvelope } from './middleware/errors.js';
import { requestId } from './middleware/request-id.js';
import { handler } from './pipeline.js';
import { routes } from './routes.js';

/** Public prefix, and the website's same-origin alias of it. */
export const PREFIXES = ['/v1', '/api/v1'];

export interface AppOptions {
  clients: Clients;
  log: Logger;
  jsonLimit: string;
  /** CIDRs of reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed. */
  trustedProxies: readonly string[];
}

export function createApp({ clients, log, jsonLimit, trustedProxies }: AppOptions): Koa {
  const app = new Koa();
  app.proxy = false;
  const router = new Router();
  // Probes for the local runner and Kubernetes: the process is up and serving HTTP.
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  for (const prefix of PREFIXES) {
    for (const spec of routes) {
      router.register(`${prefix}${spec.path}`, [spec.method], handler(spec, clients, log), { name: `${prefix}${spec.path}` });
    }
  }
  app.use(requestId());
  app.use(clientAddress(trustedProxies));
  app.use(creditsHeader(clients.billing));
  app.use(errorEnvelope(log));
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit,
      onError: (err) => {
        const status = (err as { status?: number }).status;
        if (status === 413) throw new HttpError(413, 'payload_too_large', `the JSON body is larger than ${jsonLimit}`);
        throw new HttpError(400, 'invalid_json', 'the request body is not valid JSON');
      },
    }),
  );
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
