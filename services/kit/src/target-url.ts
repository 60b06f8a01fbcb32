import { invalidArgument } from './errors.js';

/**
 * Parses a caller-supplied target URL: a URL without a scheme means https, and only http and
 * https are accepted. The WHATWG parser also canonicalises hosts (0x7f000001 -> 127.0.0.1).
 */
export function parseTargetUrl(input: string): URL {
  const text = input.trim();
  if (!text) throw invalidArgument('INVALID_URL', 'url is empty');
  const hasScheme = /^[a-z][a-z0-9+.-]*:/i.test(text) && !/^[^:/?#]+:\d+(?:[/?#]|$)/.test(text);
  let url: URL;
  try {
    url = new URL(hasScheme ? text : `https://${text.replace(/^\/\//, '')}`);
  } catch {
    throw invalidArgument('INVALID_URL', `not a valid URL: ${truncate(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidArgument('INVALID_URL', `only http and https URLs are supported, not ${url.protocol.slice(0, -1)}`);
  }
  if (!url.hostname) throw invalidArgument('INVALID_URL', 'the URL has no host');
  if (!isHostName(url.hostname))
    throw invalidArgument('INVALID_URL', `not a valid host name: ${truncate(url.hostname)}`);
  if (url.username || url.password) throw invalidArgument('INVALID_URL', 'URLs with credentials are not accepted');
  return url;
}

/** One DNS label: letters, digits, hyphens inside; underscores are tolerated, as browsers do. */
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * A host a URL can reach: an IP literal or a DNS name (the WHATWG parser has already lower-cased
 * it, punycoded IDNs and canonicalised IPv4; it lets through names like `ht!tp` or `%%%`).
 */
function isHostName(hostname: string): boolean {
  if (hostname.startsWith('[')) return true; // an IPv6 literal, validated by the parser
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
