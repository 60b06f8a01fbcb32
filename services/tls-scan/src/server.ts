import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import { TlsScanServiceService } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import { type SslScanDeps, sslScan } from './ssl-scan.js';

export function tlsScanService(deps: SslScanDeps, log: Logger): ServiceBinding {
  return bind(
    TlsScanServiceService,
    { sslScan: (request, ctx) => sslScan(request.domain, deps, ctx.signal, request.port, request.fast === true) },
    log,
  );
}
