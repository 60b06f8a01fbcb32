/** The name used when an upload carries none. */
const DEFAULT_STEM = 'bookmarks';
const DEFAULT_NAME = `${DEFAULT_STEM}.xbel`;
/** Longer names are cut (file systems stop at 255 bytes). */
const MAX_NAME_CHARS = 200;

/**
 * The caller's file name as a plain name: no directories (browsers may send a path), no control
 * characters, at most 200 characters. What remains is only ever suggested in Content-Disposition.
 */
export function cleanUploadName(raw: string): string {
  const base = raw.split(/[/\\]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return Array.from(clean).slice(-MAX_NAME_CHARS).join('');
}

/** `bookmarks.xbel` -> `bookmarks-decrypted.xbel`. */
export function decryptedName(upload: string): string {
  const { stem, extension } = split(upload);
  return `${stem}-decrypted${extension}`;
}

/** `bookmarks.xbel` -> `bookmarks.html`. */
export function htmlName(upload: string): string {
  return `${split(upload).stem}.html`;
}

function split(upload: string): { stem: string; extension: string } {
  const name = cleanUploadName(upload) || DEFAULT_NAME;
  const dot = name.lastIndexOf('.');
  const [stem, extension] = dot >= 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  return { stem: stem.trim() || DEFAULT_STEM, extension };
}

/** `bookmarks.html` -> `bookmarks.xbel`. */
export function xbelName(upload: string): string {
  return `${split(upload).stem}.xbel`;
}
