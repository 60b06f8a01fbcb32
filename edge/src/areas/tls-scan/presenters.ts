/** Where the SSL scan reply differs in shape from the spec's JSON: the certificate dates are snake_case there. */
import type { Certificate, SslScanResponse } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';

const withSpecDates = ({ validFrom, validTo, ...rest }: Certificate) => ({
  ...rest,
  valid_from: validFrom,
  valid_to: validTo,
});

export const presentSslScan = (reply: SslScanResponse) => ({
  ...reply,
  certificate: reply.certificate && withSpecDates(reply.certificate),
  chain: reply.chain.map(withSpecDates),
});
