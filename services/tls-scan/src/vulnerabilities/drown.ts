/**
 * DROWN: SSLv2 on any server holding this certificate's key lets an attacker decrypt this server's
 * TLS. Read off the enumeration for this port; the other TLS ports of the same address (mail,
 * directory, the other web port) get one SSLv2 CLIENT-HELLO each, and a SERVER-HELLO whose
 * certificate carries the same public key counts. Other hosts sharing the key are not checked.
 */
import type { KeyObject } from 'node:crypto';
import { X509Certificate } from 'node:crypto';
import { sslv2Exchange } from '../raw-hello.js';
import { CHECKS, type Context, supported, type VulnerabilityResult, verdict } from './check.js';

/** Ports tried beside the scanned one: HTTPS, SMTPS, LDAPS, IMAPS, POP3S and the alternative HTTPS port. */
export const DROWN_PORTS: readonly number[] = [443, 465, 636, 993, 995, 8443];

/** A closed or filtered port must not hold the scan: a connection comes up within this or counts as none. */
const CONNECT_MS = 1_000;

const sameKey = (a: KeyObject, b: KeyObject) =>
  a.export({ type: 'spki', format: 'der' }).equals(b.export({ type: 'spki', format: 'der' }));

/** The other ports where SSLv2 is spoken with this certificate's key, and those where it is with another. */
async function sslv2Elsewhere(ctx: Context): Promise<{ shared: number[]; otherKey: number[] }> {
  const key = ctx.certificate?.publicKey;
  const ports = (ctx.otherPorts ?? DROWN_PORTS).filter((p) => p !== ctx.endpoint.port);
  const answers = await Promise.all(
    ports.map(async (port) => {
      const answer = await sslv2Exchange(
        { ...ctx.endpoint, port },
        ctx.timeoutMs,
        ctx.signal,
        Math.min(CONNECT_MS, ctx.timeoutMs),
      );
      if (!answer.supported) return { port, shared: undefined };
      let theirs: KeyObject | undefined;
      try {
        theirs = answer.certificate && new X509Certificate(answer.certificate).publicKey;
      } catch {
        theirs = undefined; // not a certificate: nothing to compare
      }
      return { port, shared: key && theirs ? sameKey(key, theirs) : false };
    }),
  );
  return {
    shared: answers.filter((a) => a.shared === true).map((a) => a.port),
    otherKey: answers.filter((a) => a.shared === false).map((a) => a.port),
  };
}

export async function drown(ctx: Context): Promise<VulnerabilityResult> {
  const check = CHECKS.drown;
  const here = supported(ctx.suites, 'SSLv2');
  if (here?.supported) {
    return verdict(check, 'vulnerable', `SSLv2 is accepted (${here.suites.length} cipher kinds)`);
  }
  const elsewhere = await sslv2Elsewhere(ctx);
  const ports = (list: number[]) => `port${list.length > 1 ? 's' : ''} ${list.join(', ')}`;
  if (elsewhere.shared.length) {
    return verdict(
      check,
      'vulnerable',
      `SSLv2 is refused here but accepted on ${ports(elsewhere.shared)} of this address with this certificate's key`,
    );
  }
  if (here?.supported === undefined) return verdict(check, 'unknown', 'the SSLv2 probe got no answer in time');
  const tried = (ctx.otherPorts ?? DROWN_PORTS).filter((p) => p !== ctx.endpoint.port);
  if (!tried.length) {
    return verdict(check, 'not_vulnerable', 'SSLv2 is refused here (other servers sharing this key are not checked)');
  }
  const otherKey = elsewhere.otherKey.length
    ? `, except ${ports(elsewhere.otherKey)}, where it comes with another key`
    : '';
  return verdict(
    check,
    'not_vulnerable',
    `SSLv2 is refused here and on ${ports(tried)} of this address${otherKey} ` +
      '(other hosts sharing the key are not checked)',
  );
}
