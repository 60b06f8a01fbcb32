import dns from 'node:dns/promises';
import net from 'node:net';
import { invalidArgument, OutboundError, parseTargetUrl, type AddressPolicy, type SafeHttp } from '@webutil/kit';
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
  const addresses = await resolve(url.hostname);
  if (!addresses) return base;
  const ipAddress = addresses.find((a) => net.isIPv4(a)) ?? addresses[0];
  const reachable = addresses.filter((a) => deps.policy.allows(a));
  if (reachable.length === 0) {
    throw invalidArgument('TARGET_BLOCKED', `${url.hostname} resolves to ${ipAddress} (${deps.policy.refusal(ipAddress ?? '')}); private and internal addresses are not checked`);
  }
  const started = performance.now();
  try {
    const res = await deps.http.fetch(url, { method: 'GET', maxRedirects: MAX_REDIRECTS, timeoutMs: deps.timeoutMs, signal });
    await res.dump();
    return { ...base, httpsStatus: res.status, responseTimeMs: res.timeToHeadersMs, ipAddress };
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof OutboundError && err.kind === 'blocked') throw invalidArgument('TARGET_BLOCKED', `refused: ${err.message}`);
    return { ...base, responseTimeMs: Math.round(performance.now() - started), ipAddress };
  }
}

/** Addresses for the host, or undefined when the name does not resolve. */
async function resolve(hostname: string): Promise<string[] | undefined> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) return [host];
  try {
    const found = await dns.lookup(host, { all: true });
    return found.length ? found.map((a) => a.address) : undefined;
  } catch {
    return undefined;
  }
}
