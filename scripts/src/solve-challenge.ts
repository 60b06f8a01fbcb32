/**
 * `npm run -s solve-challenge`: reads the answer of `GET /v1/challenge` on stdin, solves the ALTCHA
 * proof of work and prints the solution payload (base64) that `POST /v1/challenge`, sign-up and
 * sign-in take, so the browser flow can be followed from a shell:
 *   PAYLOAD=$(curl -s $API/v1/challenge | npm run -s solve-challenge)
 */
import { text } from 'node:stream/consumers';
import { type AltchaChallenge, solveAltcha } from './altcha.js';

function fail(message: string): never {
  process.stderr.write(`solve-challenge: ${message}\n`);
  process.exit(1);
}

let answer: { data?: { provider?: string; challenge?: AltchaChallenge } };
try {
  answer = JSON.parse(await text(process.stdin));
} catch {
  fail('stdin is not the JSON answer of GET /v1/challenge');
}
const challenge = answer.data?.challenge;
if (answer.data?.provider !== 'altcha' || !challenge)
  fail('not an ALTCHA challenge (with Turnstile configured, the challenge is solved in a browser)');
const payload = (await solveAltcha(challenge)) ?? fail('no solution under maxnumber');
process.stdout.write(`${payload}\n`);
