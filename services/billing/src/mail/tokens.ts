import { createHash, randomBytes } from 'node:crypto';

/** A token for a mailed link: 32 random bytes, URL-safe; the store keeps only its SHA-256. */
export function newLinkToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashLinkToken(token) };
}

export const hashLinkToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** The website page a link opens, with its token (`base` is PUBLIC_BASE_URL). */
export function linkTo(base: string, page: string, token: string): string {
  const url = new URL(page, `${base.replace(/\/+$/, '')}/`);
  url.searchParams.set('token', token);
  return url.toString();
}
