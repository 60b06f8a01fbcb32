import { type CallContext, notFound } from '@webutil/kit';
import { type ArtifactStore, isArtifactName, sendArtifact } from '@webutil/kit/artifacts';
import type { ReadImageRequest, ReadImageResponse } from '@webutil/proto/webutil/monitor/v1/monitor';
import type { RunRecord } from './store/store.js';

/** The images a screenshot run stored: its capture and its diff image. */
export function imagesOfRun(run: Pick<RunRecord, 'resultJson' | 'changesJson'>): string[] {
  const parse = (json: string | undefined) => (json ? (JSON.parse(json) as Record<string, unknown>) : {});
  const names = [parse(run.resultJson).image, parse(run.changesJson).diffImage];
  return names.filter((name): name is string => typeof name === 'string' && isArtifactName(name));
}

/** ReadImage: a run's capture or diff image, streamed; a name the store never issued is absent. */
export async function readImage(
  request: ReadImageRequest,
  images: ArtifactStore,
  ctx: CallContext,
  send: (message: ReadImageResponse) => Promise<void>,
): Promise<void> {
  const found = isArtifactName(request.filename) ? await images.open(request.filename) : undefined;
  if (!found) throw notFound('FILE_NOT_FOUND', 'no such image, or its run is no longer kept');
  await sendArtifact(found, send, ctx.signal);
}
