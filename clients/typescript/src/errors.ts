/** The API's failure envelope as an error, and the client's own failures (network, aborted). */

/** A failure the API answered: `{"success": false, "error": {"code", "message"}}` with its status. */
export class WebutilError extends Error {
  override name = 'WebutilError';
  constructor(
    message: string,
    /** snake_case machine code, e.g. invalid_url, insufficient_credits; `network_error` when unreachable. */
    readonly code: string,
    /** HTTP status; 0 when no answer came (network error). */
    readonly status: number,
    /** The X-Request-Id of the answer, to quote to support. */
    readonly requestId: string | undefined,
    /** Seconds until a retry may succeed (Retry-After), when the answer said. */
    readonly retryAfter: number | undefined,
    /** With insufficient_credits: the credits the call needs. */
    readonly creditsRequired?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** The error an answer that is not a success carries (its envelope, or its status when it has none). */
  static async fromResponse(response: Response): Promise<WebutilError> {
    const text = await response.text().catch(() => '');
    let code = `http_${response.status}`;
    let message = `${response.status} ${response.statusText}`.trim();
    let creditsRequired: number | undefined;
    try {
      const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; creditsRequired?: unknown } };
      if (typeof body.error?.code === 'string') code = body.error.code;
      if (typeof body.error?.message === 'string') message = body.error.message;
      if (typeof body.error?.creditsRequired === 'number') creditsRequired = body.error.creditsRequired;
    } catch {
      // not the envelope (a proxy's page): the status says what happened
    }
    return new WebutilError(
      message,
      code,
      response.status,
      response.headers.get('x-request-id') ?? undefined,
      retryAfterSeconds(response.headers),
      creditsRequired,
    );
  }
}

/** Retry-After in seconds (a number, or an HTTP date), when present. */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
