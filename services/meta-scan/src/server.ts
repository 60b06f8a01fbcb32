import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import { MetaScanServiceService } from '@webutil/proto/webutil/metascan/v1/metascan';
import { type DownCheckDeps, downCheck } from './down-check.js';
import { type MetaScanDeps, metaScan } from './meta-scan.js';

export function metaScanService(
  deps: { downCheck: DownCheckDeps; metaScan: MetaScanDeps },
  log: Logger,
): ServiceBinding {
  return bind(
    MetaScanServiceService,
    {
      downCheck: (request, ctx) => downCheck(request, deps.downCheck, ctx.signal),
      metaScan: (request, ctx) => metaScan(request, deps.metaScan, ctx.signal),
    },
    log,
  );
}
