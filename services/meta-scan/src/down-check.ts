import {
  type AddressPolicy,
  OutboundError,
  parseTargetUrl,
  resolveTarget,
  type SafeHttp,
  targetFailure,
} from '@webutil/kit';
import type { DownCheckResponse } from '@webutil/proto/webutil/metascan/v1/metascan';

export interface DownCheckDeps {
  http: SafeHttp;
  policy: AddressPolicy;
  /** Fixed vantage-point label reported to callers. */
  testedFrom: string;
  /** Budget for the whole request, redirects included (spec: 15 s). */
  timeoutMs: number;
}

const MAX_REDIRECTS = 5;

/**
 * Is the site up? One GET following at most five redirects. Any HTTP status means reachable;
 * a failure to complete is a 200 with no status, not an error. Only a blocked target (a private
 * or internal address, directly or through a redirect) is refused.
 */
export async function downCheck(rawUrl: string, deps: DownCheckDeps, signal: AbortSignal): Promise<DownCheckResponse> {
  const url = parseTargetUrl(rawUrl);
  const base: DownCheckResponse = { url: url.href, testedFrom: deps.testedFrom };
  let addresses: string[];
  try {
    addresses = await resolveTarget(url.hostname, deps.policy);
  } catch (err) {
    if (err instanceof OutboundError && err.kind === 'dns') return base; // down: the name does not resolve
    throw targetFailure(err);
  }
  const ipAddress = addresses[0]; // IPv4 first
  const started = performance.now();
  try {
    const res = await deps.http.fetch(url, {
      method: 'GET',
      maxRedirects: MAX_REDIRECTS,
      timeoutMs: deps.timeoutMs,
      signal,
    });
    await res.dump();
    return { ...base, httpsStatus: res.status, responseTimeMs: res.timeToHeadersMs, ipAddress };
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof OutboundError && err.kind === 'blocked') throw targetFailure(err);
    return { ...base, responseTimeMs: Math.round(performance.now() - started), ipAddress };
  }
}
