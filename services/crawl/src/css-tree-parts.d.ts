// css-tree's tokenizer and utils entries (package.json exports), typed as its main entry's (@types/css-tree).
declare module 'css-tree/tokenizer' {
  export { tokenize, tokenTypes } from 'css-tree';
}
declare module 'css-tree/utils' {
  export { string, url } from 'css-tree';
}
