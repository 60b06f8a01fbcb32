import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import { MetaScanServiceService } from '@webutil/proto/webutil/metascan/v1/metascan';
import { downCheck, type DownCheckDeps } from './down-check.js';

export function metaScanService(deps: DownCheckDeps, log: Logger): ServiceBinding {
  return bind(
    MetaScanServiceService,
    {
      downCheck: (request, ctx) => downCheck(request.url, deps, ctx.signal),
    },
    log,
  );
}
