/**
 * The vulnerability checks of testssl.sh's -U, in its order, each `vulnerable`, `not_vulnerable`
 * or `unknown` with why, each able to cap the grade as the SSL Labs guide says. Most follow from
 * the suite enumeration (pure functions of it); the others are bounded probes of their own, run
 * at once, each within the probe timeout. One file per family in `vulnerabilities/`.
 */
import { setMaxListeners } from 'node:events';
import { MAX_LISTENERS, type SuiteScan } from './cipher-suites.js';
import type { HomePage } from './hsts.js';
import { ccsInjection } from './vulnerabilities/ccs-injection.js';
import type { Context, VulnerabilityResult } from './vulnerabilities/check.js';
import { beast, freak, lucky13, poodle, rc4, sweet32 } from './vulnerabilities/cipher-weaknesses.js';
import { breach, crime } from './vulnerabilities/compression.js';
import { drown } from './vulnerabilities/drown.js';
import { fallback } from './vulnerabilities/fallback.js';
import { heartbleed } from './vulnerabilities/heartbleed.js';
import { logjam } from './vulnerabilities/logjam.js';
import { clientRenegotiation, secureRenegotiation } from './vulnerabilities/renegotiation.js';
import { robot } from './vulnerabilities/robot.js';
import { ticketbleed } from './vulnerabilities/ticketbleed.js';

export type { CapGrade, Context, Verdict, VulnerabilityResult } from './vulnerabilities/check.js';

/** The verdicts read off the enumeration and the home page alone: no connection of their own. */
export function derivedChecks(suites: SuiteScan, page: HomePage): VulnerabilityResult[] {
  return [
    rc4(suites),
    sweet32(suites),
    freak(suites),
    logjam(suites),
    poodle(suites),
    beast(suites),
    lucky13(suites),
    secureRenegotiation(suites),
    breach(page),
  ];
}

/** Every check, in testssl.sh's order. */
export async function checkVulnerabilities(ctx: Context): Promise<VulnerabilityResult[]> {
  // One abort listener per connection in flight: the checks' own signal, not the caller's.
  const scoped = AbortSignal.any([ctx.signal]);
  setMaxListeners(MAX_LISTENERS, scoped);
  ctx = { ...ctx, signal: scoped };
  const { suites, page } = ctx;
  const [
    heartbleedResult,
    ccs,
    ticketbleedResult,
    robotResult,
    renegotiation,
    crimeResult,
    fallbackResult,
    drownResult,
  ] = await Promise.all([
    heartbleed(ctx),
    ccsInjection(ctx),
    ticketbleed(ctx),
    robot(ctx),
    clientRenegotiation(ctx),
    crime(ctx),
    fallback(ctx),
    drown(ctx),
  ]);
  return [
    heartbleedResult,
    ccs,
    ticketbleedResult,
    robotResult,
    secureRenegotiation(suites),
    renegotiation,
    crimeResult,
    breach(page),
    poodle(suites),
    fallbackResult,
    sweet32(suites),
    freak(suites),
    drownResult,
    logjam(suites),
    beast(suites),
    lucky13(suites),
    rc4(suites),
  ];
}
