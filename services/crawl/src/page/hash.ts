/**
 * A 53-bit hash of a string (two 32-bit FNV-1a lanes), for sets that only answer "seen before?"
 * over many strings: a number costs a fraction of the string it stands for. Collisions are
 * negligible at the sizes used here (millions of entries against 2^53 values).
 */
export function hash53(text: string): number {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) >>> 11);
}
