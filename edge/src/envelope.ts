/** The spec's failure envelope, raised anywhere in the edge and rendered by one middleware. */
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

/** Most routes wrap their result in `data`; rendering and XBEL routes put fields at top level. */
export const dataEnvelope = <T>(data: T) => ({ success: true as const, data });
export const flatEnvelope = <T extends object>(fields: T) => ({ success: true as const, ...fields });
