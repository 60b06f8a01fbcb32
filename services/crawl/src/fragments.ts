import { Parser } from 'htmlparser2';

/**
 * In-page targets: `#name` scrolls to the element with that id, or to an `<a name>` (HTML's
 * legacy anchors). An empty fragment and `#top` always work, and text fragments (`#:~:text=`)
 * are the browser's business, not the page's.
 */
export function addTargets(tag: string, attrs: Record<string, string>, into: Set<string>): void {
  if (attrs.id) into.add(attrs.id);
  if (tag === 'a' && attrs.name) into.add(attrs.name);
}

/** The fragment of a URL, decoded, or undefined when there is none worth checking. */
export function checkableFragment(url: string): string | undefined {
  const hash = url.indexOf('#');
  if (hash < 0) return undefined;
  const raw = url.slice(hash + 1);
  if (raw === '' || raw.startsWith(':~:') || raw.toLowerCase() === 'top') return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Collects the ids and anchor names of a document fed in chunks. */
export class TargetCollector {
  readonly targets = new Set<string>();
  private readonly parser = new Parser(
    { onopentag: (name, attrs) => addTargets(name, attrs, this.targets) },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );

  write(chunk: string): void {
    this.parser.write(chunk);
  }

  end(): void {
    this.parser.end();
  }
}
