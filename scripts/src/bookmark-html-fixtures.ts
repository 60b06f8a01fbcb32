/**
 * Bookmark HTML (Netscape format) shaped to cost a reader the most: for the bookmark service's
 * bound tests and its benchmark (docs/decisions/0292-bookmark-bounds.md).
 *   deep         `depth` nested folders, then bookmarks in the innermost until `bytes` (`items` at
 *                most, then one with a title that fills the file)
 *   flat         the same in one list
 *   attributes   bookmarks whose HREF, title and ICON are each about a third of `bytes` / `items`
 */
export type HostileShape = 'deep' | 'flat' | 'attributes';

const HEAD =
  '<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">\n' +
  '<TITLE>Bookmarks</TITLE>\n<H1>Bookmarks</H1>\n<DL><p>\n';

export function hostileBookmarkHtml(
  shape: HostileShape,
  bytes: number,
  options: { depth?: number; items?: number } = {},
): string {
  const parts = [HEAD];
  let size = HEAD.length;
  const push = (text: string) => {
    parts.push(text);
    size += text.length;
  };
  const depth = shape === 'deep' ? (options.depth ?? 99) : 0;
  for (let i = 0; i < depth; i++) push(`<DT><H3 ADD_DATE="1700000000">F${i}</H3>\n<DL><p>\n`);
  const tail = '</DL><p>\n'.repeat(depth + 1);
  const budget = bytes - tail.length;
  if (shape === 'attributes') {
    const items = options.items ?? 3;
    const each = Math.floor((budget - size) / items / 3) - 40;
    for (let i = 0; i < items; i++)
      push(
        `<DT><A HREF="https://example.com/${'a'.repeat(each)}" ICON="${'b'.repeat(each)}">${'c'.repeat(each)}</A>\n`,
      );
  } else {
    const items = options.items ?? Number.MAX_SAFE_INTEGER;
    const line = (i: number) => `<DT><A HREF="https://example.com/${i}" ADD_DATE="1700000000">b${i}</A>\n`;
    let i = 0;
    while (i < items && size + line(i).length <= budget) push(line(i++));
    const pad = budget - size - 40;
    if (pad > 0) push(`<DT><A HREF="https://example.com/pad">${'p'.repeat(pad)}</A>\n`);
  }
  push(tail);
  return parts.join('');
}
