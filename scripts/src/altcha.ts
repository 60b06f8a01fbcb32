import { solveChallenge } from 'altcha-lib';

/** The challenge JSON of `GET /v1/challenge` (`data.challenge`) when the provider is ALTCHA. */
export interface AltchaChallenge {
  algorithm: string;
  challenge: string;
  maxnumber: number;
  salt: string;
  signature: string;
}

/**
 * Solves the proof of work as the ALTCHA widget does and returns the payload (base64 JSON) that
 * `POST /v1/challenge`, sign-up and sign-in take; undefined when no number up to maxnumber solves it.
 */
export async function solveAltcha(challenge: AltchaChallenge): Promise<string | undefined> {
  const { algorithm, maxnumber, salt, signature } = challenge;
  const solution = await solveChallenge(challenge.challenge, salt, algorithm, maxnumber).promise;
  if (!solution) return undefined;
  const payload = { algorithm, challenge: challenge.challenge, number: solution.number, salt, signature };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}
