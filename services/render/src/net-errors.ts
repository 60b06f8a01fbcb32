import { type OutboundError, type OutboundFailureKind, outboundError } from '@webutil/kit';

/**
 * Chromium's net errors (net/base/net_error_list.h) as the kit's failure kinds and codes, so a
 * page that fails to load reads as every other route words the same failure: the code the kit's
 * own fetches report where one matches, else Chromium's name. TLS details say what was wrong.
 */
const NET_ERRORS: Record<string, [OutboundFailureKind, string, string?]> = {
  ERR_NAME_NOT_RESOLVED: ['dns', 'ENOTFOUND'],
  ERR_NAME_RESOLUTION_FAILED: ['dns', 'EAI_AGAIN'],
  ERR_CONNECTION_REFUSED: ['connect', 'ECONNREFUSED'],
  ERR_CONNECTION_RESET: ['connect', 'ECONNRESET'],
  ERR_CONNECTION_ABORTED: ['connect', 'ECONNRESET'],
  ERR_CONNECTION_CLOSED: ['connect', 'UND_ERR_SOCKET'],
  ERR_EMPTY_RESPONSE: ['connect', 'UND_ERR_SOCKET'],
  ERR_ADDRESS_UNREACHABLE: ['connect', 'EHOSTUNREACH'],
  ERR_INTERNET_DISCONNECTED: ['connect', 'ENETUNREACH'],
  ERR_TIMED_OUT: ['timeout', 'ETIMEDOUT'],
  ERR_CONNECTION_TIMED_OUT: ['timeout', 'ETIMEDOUT'],
  // Ports Chromium never connects to (SMTP, port 1 and the like): refused, as a blocked target is.
  ERR_UNSAFE_PORT: ['blocked', 'ERR_UNSAFE_PORT', 'the browser does not connect to this port'],
  ERR_CERT_AUTHORITY_INVALID: ['tls', 'ERR_CERT_AUTHORITY_INVALID', 'the certificate is not from a trusted issuer'],
  ERR_CERT_DATE_INVALID: ['tls', 'ERR_CERT_DATE_INVALID', 'the certificate has expired or is not yet valid'],
  ERR_CERT_COMMON_NAME_INVALID: ['tls', 'ERR_CERT_COMMON_NAME_INVALID', 'the certificate is for another host name'],
};

/** Chromium's error text for a failed load (`net::ERR_…`) as the kit's failure; `url` is what failed. */
export function netFailure(errorText: string, url: string): OutboundError {
  const name = /ERR_[A-Z0-9_]+/.exec(errorText)?.[0] ?? 'ERR_FAILED';
  const known = NET_ERRORS[name];
  if (known) return outboundError(known[0], known[1], known[2], url);
  if (/^ERR_(CERT|SSL)_/.test(name)) return outboundError('tls', name, undefined, url);
  if (/^ERR_(INVALID_|RESPONSE_|TOO_MANY_REDIRECTS|UNSAFE_REDIRECT|CONTENT_)/.test(name)) {
    return outboundError('protocol', name, undefined, url);
  }
  return outboundError('connect', name, undefined, url);
}
