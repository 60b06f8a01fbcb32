import net from 'node:net';
import { invalidArgument } from './errors.js';

/** A host a service connects to by name (TLS scans), as the caller gave it. */
export interface TargetHost {
  /** ASCII form: lower case, IDNs in punycode, IP literals canonical (IPv6 without brackets). */
  name: string;
  isIp: boolean;
}

const MAX_NAME = 253;
/** One label of an ASCII host name (underscores occur in real names; wildcards and escapes do not). */
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * Reads a caller's bare host name or IP literal (the SSL scan's `domain`). A scheme, path, query,
 * port or user info is refused with the reason rather than silently dropped: the caller meant
 * something other than what would be scanned. Used by the edge (a 400 before any credit is held)
 * and by the service.
 */
export function parseTargetHost(input: string): TargetHost {
  const text = input.trim().replace(/\.$/, '');
  const refuse = (why: string) =>
    invalidArgument('INVALID_DOMAIN', `domain must be a bare host name such as example.com: ${why}`);
  if (!text) throw refuse('it is empty');
  const bare = text.replace(/^\[(.*)\]$/, '$1');
  if (net.isIPv6(bare)) return { name: new URL(`https://[${bare}]`).hostname.slice(1, -1), isIp: true };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw refuse('remove the scheme (such as https://)');
  if (/[/?#\\]/.test(text)) throw refuse('remove the path or query');
  if (text.includes('@')) throw refuse('remove the user name');
  if (text.includes(':')) throw refuse('remove the port (the scan always uses the HTTPS port)');
  if (/[\s%]/.test(text)) throw refuse('it contains characters a host name cannot have');
  let name: string;
  try {
    name = new URL(`https://${text}/`).hostname;
  } catch {
    throw refuse('it is not a valid host name');
  }
  if (net.isIPv4(name)) return { name, isIp: true };
  const labels = name.split('.');
  if (name.length > MAX_NAME || !labels.every((l) => LABEL.test(l))) throw refuse('it is not a valid host name');
  return { name, isIp: false };
}
