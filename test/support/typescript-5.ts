// odata2ts requires 'typescript' without declaring it and needs the TypeScript 5 API; our
// typescript is 7 (no JS API). ts-morph, which odata2ts depends on, bundles TypeScript 5:
// this preload (`node -r ./typescript-5.cjs …`) hands that one to odata2ts.
// REVISIT: drop when odata2ts supports TypeScript 7.

export const TYPESCRIPT_5_PRELOAD = `
const Module = require('node:module')
const resolve = Module._resolveFilename
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'typescript') return resolve.call(this, '@ts-morph/common/dist/typescript.js', parent, ...rest)
  return resolve.call(this, request, parent, ...rest)
}
`
