/** glob-to-regexp ships no types; the one function used (see scan-options.ts). */
declare module 'glob-to-regexp' {
  interface Options {
    extended?: boolean;
    globstar?: boolean;
    flags?: string;
  }
  export default function globToRegExp(glob: string, options?: Options): RegExp;
}
