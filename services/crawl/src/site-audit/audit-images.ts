import { type CallContext, notFound } from '@webutil/kit';
import { type ArtifactStore, isArtifactName, sendArtifact } from '@webutil/kit/artifacts';
import type { ReadSiteAuditImageRequest, ReadSiteAuditImageResponse } from '@webutil/proto/webutil/crawl/v1/site_audit';

/** ReadSiteAuditImage: a start-page screenshot of an audit, streamed; a name the store never issued is absent. */
export async function readAuditImage(
  request: ReadSiteAuditImageRequest,
  images: ArtifactStore,
  ctx: CallContext,
  send: (message: ReadSiteAuditImageResponse) => Promise<void>,
): Promise<void> {
  const found = isArtifactName(request.filename) ? await images.open(request.filename) : undefined;
  if (!found) throw notFound('FILE_NOT_FOUND', 'no such image, or its audit is no longer kept');
  await sendArtifact(found, send, ctx.signal);
}
