import { header, type SafeHttp } from '@webutil/kit';

/** A Strict-Transport-Security header's directives (RFC 6797 6.1). */
export interface HstsPolicy {
  maxAge: number;
  includeSubDomains: boolean;
  preload: boolean;
}

/**
 * A Strict-Transport-Security header value parsed (RFC 6797 6.1: directives separated by
 * semicolons, names case-insensitive, values optionally quoted). Undefined when there is no valid
 * max-age: browsers ignore such a header (6.1.1), so it is no policy.
 */
export function parseHsts(value: string | undefined): HstsPolicy | undefined {
  if (!value) return undefined;
  let maxAge: number | undefined;
  let includeSubDomains = false;
  let preload = false;
  for (const directive of value.split(';')) {
    const name = directive.split('=')[0]?.trim().toLowerCase();
    if (name === 'max-age') {
      const match = /^\s*max-age\s*=\s*"?(\d{1,12})"?\s*$/i.exec(directive);
      if (!match) return undefined;
      maxAge = Number(match[1]);
    } else if (name === 'includesubdomains') includeSubDomains = true;
    else if (name === 'preload') preload = true;
  }
  return maxAge === undefined ? undefined : { maxAge, includeSubDomains, preload };
}

/** The max-age of a Strict-Transport-Security header value, or undefined when there is none. */
export const hstsMaxAge = (value: string | undefined): number | undefined => parseHsts(value)?.maxAge;

/**
 * The Strict-Transport-Security header of `url` (the home page), through the kit's safe HTTP client:
 * HEAD, no redirect followed (a redirect's own answer carries the host's policy), certificate
 * checked as a browser does (a browser ignores HSTS sent over a connection with certificate errors,
 * RFC 6797 8.1). Any failure, or no answer within `timeoutMs`, is "no header".
 */
export async function fetchHsts(
  http: SafeHttp,
  url: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string | undefined> {
  try {
    const res = await http.fetch(url, {
      method: 'HEAD',
      maxRedirects: 0,
      timeoutMs,
      maxBodyBytes: 0,
      // One connection per scan: a scanned host's connection is not kept for the next scan.
      headers: { connection: 'close' },
      signal,
    });
    await res.dump();
    return header(res.headers, 'strict-transport-security');
  } catch {
    return undefined;
  }
}
