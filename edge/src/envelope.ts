/** Every response carries the caller's credits left (0 when the caller is unknown). */
export const CREDITS_HEADER = 'X-Credits-Remaining';

export function setCredits(response: { set(field: string, value: string): void }, remaining: number): void {
  response.set(CREDITS_HEADER, String(remaining));
}

/** The spec's envelopes. A failure is raised anywhere in the edge and rendered by one middleware. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    /** snake_case machine code, e.g. invalid_request, target_blocked, insufficient_credits. */
    readonly code: string,
    message: string,
    readonly creditsRequired?: number,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface FailureBody {
  success: false;
  error: { code: string; message: string; creditsRequired?: number };
}

export function failureBody(err: HttpError): FailureBody {
  const error: FailureBody['error'] = { code: err.code, message: err.message };
  if (err.creditsRequired !== undefined) error.creditsRequired = err.creditsRequired;
  return { success: false, error };
}

/** How a route's success fields are wrapped: in `data` (most routes) or at top level (rendering and XBEL). */
export type Envelope = 'data' | 'top-level';

export function successBody(fields: unknown, envelope: Envelope): object {
  return envelope === 'data' ? { success: true, data: fields } : { success: true, ...(fields as object) };
}
