/** Webhook verification (Standard Webhooks): the job envelope a webhook delivers, once its signature holds. */
import { Webhook } from 'standardwebhooks';

/**
 * The delivery's JSON once its signature (webhook-id, webhook-timestamp, webhook-signature, with
 * the account's signing secret `whsec_…`) and timestamp (within 5 minutes) hold; throws otherwise.
 * Pass the body exactly as received (the raw text or bytes, not re-serialised JSON).
 */
export function verifyWebhook<T = unknown>(
  secret: string,
  body: string | Uint8Array,
  headers: Headers | Record<string, string | string[] | undefined>,
): T {
  const get = (name: string) => {
    if (headers instanceof Headers) return headers.get(name) ?? '';
    const value = headers[name] ?? headers[name.toLowerCase()];
    return (Array.isArray(value) ? value[0] : value) ?? '';
  };
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  return new Webhook(secret).verify(text, {
    'webhook-id': get('webhook-id'),
    'webhook-timestamp': get('webhook-timestamp'),
    'webhook-signature': get('webhook-signature'),
  }) as T;
}
