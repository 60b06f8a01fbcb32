/**
 * A response header's value (the first, when it came more than once). A file of its own, exported as
 * `@webutil/kit/http-header`, so that a parse thread can read headers without loading the HTTP client.
 */
export function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
