// The names of the control information a request body carries (OData JSON 4.01 §4.5): a 4.0
// body prefixes them with `odata.` (`Customer@odata.bind`, `@odata.type`), a 4.01 body should
// not (`Customer@bind`, `@type`). Both are read alike, so a 4.01 client's bind is not taken
// for an unknown annotation and dropped.

const BIND = ['@odata.bind', '@bind']
const TYPE = ['@odata.type', '@type']

/** The navigation property a bind names: `Customer@odata.bind` or `Customer@bind` → Customer; undefined for any other name. */
export function boundProperty(name: string): string | undefined {
  const suffix = BIND.find((bind) => name.endsWith(bind))
  return suffix === undefined ? undefined : name.slice(0, -suffix.length)
}

/** `@odata.type`, or `@type`: the type of the object it is in. */
export function isTypeControl(name: string): boolean {
  return TYPE.includes(name)
}
