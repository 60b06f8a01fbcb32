/**
 * Schemas every route shares: the spec's envelopes, required parameters, the target URL rule and
 * a crawl job id. Response schemas are strict: a field the spec does not list is a contract drift.
 */
import { parseTargetUrl, ServiceError } from '@webutil/kit';
import { z } from 'zod';
import type { Envelope } from '../envelope.js';

/** The machine code of a zod issue that is not the generic `invalid_request`. */
export const issueCode = (issue: z.core.$ZodIssue): string | undefined =>
  issue.code === 'custom' && typeof issue.params?.code === 'string' ? issue.params.code : undefined;

/** A required string parameter with the spec's wording for a missing one. */
export const required = (name: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a string`) })
    .trim()
    .min(1, `${name} is required`)
    .max(4096, `${name} is too long`);

/**
 * A required parameter that must pass one of the services' own parsers (the kit's), applied here
 * so a bad value is a 400 with `code` before any credit is held.
 */
export const parsedBy = (name: string, parse: (value: string) => unknown, code: string) =>
  required(name).superRefine((value, ctx) => {
    if (!value) return; // reported as missing
    try {
      parse(value);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message, params: { code } });
    }
  });

/**
 * A URL to fetch: the kit's parseTargetUrl (http or https, https when no scheme, a real host name
 * or IP literal, no credentials).
 */
export const targetUrl = parsedBy('url', parseTargetUrl, 'invalid_url').meta({
  description: 'An http or https URL; without a scheme, https is meant.',
  example: 'https://example.com/',
});

/**
 * A query parameter's flag: on the wire the text true or false (a query value is text), typed
 * boolean in the contract so generated clients take a boolean and send the same text.
 */
export const queryFlag = (name: string, meta: { description: string; default: boolean }) =>
  z
    .enum(['true', 'false'], { error: `${name} must be true or false` })
    .optional()
    .meta({ type: 'boolean', ...meta } as z.GlobalMeta);

/**
 * A query parameter's whole number from `min` to `max`: digits only on the wire (no sign, exponent
 * or spaces), typed integer in the contract.
 */
export const queryInteger = (
  name: string,
  min: number,
  max: number,
  meta: { description: string; example: number },
) => {
  const rule = `${name} must be an integer from ${min} to ${max}`;
  return z
    .string()
    .regex(new RegExp(`^\\d{1,${String(max).length}}$`), rule)
    .transform(Number)
    .refine((n) => n >= min && n <= max, rule)
    .optional()
    .meta({ type: 'integer', minimum: min, maximum: max, ...meta } as z.GlobalMeta);
};

export const urlInput = z.object({ url: targetUrl });
export const jobInput = z.object({ job_id: required('job_id').meta({ description: 'The jobId of the crawl start.' }) });
export const noInput = z.object({});

/** ISO 8601 timestamps, as the services write them (toISOString). */
export const timestamp = z.iso.datetime();
export const count = z.number().int().min(0);

/** The failure envelope of every route. */
export const Failure = z
  .strictObject({
    success: z.literal(false),
    error: z.strictObject({
      code: z.string().meta({ description: 'snake_case machine code, e.g. invalid_url, insufficient_credits.' }),
      message: z.string(),
      creditsRequired: z
        .number()
        .int()
        .optional()
        .meta({ description: 'Credits the call needs; only with insufficient_credits.' }),
    }),
  })
  .meta({ id: 'Failure' });

/** The whole success body of a route, from its output schema and envelope. */
export function successSchema(output: z.ZodType, envelope: Envelope): z.ZodType {
  if (envelope === 'data') return z.strictObject({ success: z.literal(true), data: output });
  if (!(output instanceof z.ZodObject)) throw new Error('a top-level envelope needs an object schema');
  return z.strictObject({ success: z.literal(true), ...output.shape });
}
