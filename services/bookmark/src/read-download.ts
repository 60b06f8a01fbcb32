import { notFound } from '@webutil/kit';
import {
  DownloadKind,
  type ReadDownloadRequest,
  type ReadDownloadResponse,
} from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { type BookmarkFilesDeps, lifetime, OUTPUTS, streamStored } from './bookmark-files.js';

const EXTENSION_BY_KIND: Partial<Record<DownloadKind, string>> = {
  [DownloadKind.DOWNLOAD_KIND_DECRYPTED]: OUTPUTS.xbel.extension,
  [DownloadKind.DOWNLOAD_KIND_HTML]: OUTPUTS.html.extension,
  [DownloadKind.DOWNLOAD_KIND_XBEL_FROM_HTML]: OUTPUTS.xbelFromHtml.extension,
};

/**
 * ReadDownload: streams a stored output; the first message carries its name, type and size. A
 * name the store never issued (a path, `..`, another route's file) or an expired one is absent.
 */
export async function readDownload(
  request: ReadDownloadRequest,
  deps: BookmarkFilesDeps,
  send: (message: ReadDownloadResponse) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  const extension = EXTENSION_BY_KIND[request.kind];
  const opened =
    extension && request.storedName.endsWith(`.${extension}`) ? await deps.store.open(request.storedName) : undefined;
  if (!opened) throw notFound('FILE_NOT_FOUND', `no such file: download links are valid for ${lifetime(deps.ttlMs)}`);
  const { info, body } = opened;
  await streamStored(
    { fileName: info.downloadName ?? info.name, contentType: info.contentType, sizeBytes: info.sizeBytes },
    body,
    send,
    signal,
  );
}
