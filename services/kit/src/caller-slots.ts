/**
 * Work in flight per caller (the subject billing counts its rate against: an account, or a client
 * network). A failed render is free, so without a bound one caller with pages that never settle
 * could hold every browser; over its bound a caller is refused at once instead. The edge counts
 * what it admits; the render service counts again what reaches it from every edge.
 */
export class CallerSlots {
  private readonly held = new Map<string, number>();

  /** A slot for one call of `subject`, or undefined when it has `bound` in flight already. */
  take(subject: string, bound: number): (() => void) | undefined {
    const held = this.held.get(subject) ?? 0;
    if (held >= bound) return undefined;
    this.held.set(subject, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(subject) ?? 1) - 1;
      if (left > 0) this.held.set(subject, left);
      else this.held.delete(subject);
    };
  }
}
