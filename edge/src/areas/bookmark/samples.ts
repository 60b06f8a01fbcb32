/**
 * The sandbox's fixed replies for bookmark conversions, typed as the service's ts-proto replies:
 * the compiler checks them against the protos, and the area's presenters turn them into the answers
 * (docs/decisions/0207-sandbox-keys.md). The sandbox's clients (edge/src/sandbox/clients.ts) serve
 * them.
 */

/** A bookmark conversion's reply: the sample file of its output format. */
export const converted = (file: { name: string }, message: string) => ({
  storedName: file.name,
  fileName: file.name,
  message,
});
