import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import { RenderServiceService } from '@webutil/proto/webutil/render/v1/render';
import { type RenderDeps, readArtifact, screenshot, urlToPdf } from './renders.js';

export function renderService(deps: RenderDeps, log: Logger): ServiceBinding {
  return bind(
    RenderServiceService,
    {
      screenshot: (request, ctx) => screenshot(request, deps, ctx),
      urlToPdf: (request, ctx) => urlToPdf(request, deps, ctx),
      readArtifact: (request, ctx, send) => readArtifact(request, deps.store, ctx, send),
    },
    log,
  );
}
