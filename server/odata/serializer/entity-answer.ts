// The body of one entity: its JSON from the statement (sql/compile-read.ts), finished
// (finish-entities.ts), with @odata.context in front. The context URL depends on the host a
// request names, so it is written here, never carried through SQL.
//   ('http://h/api/$metadata#Customers(Name)/$entity', '{"Guid":"…","Name":"Ada"}')
//   →  {"@odata.context":"http://h/api/$metadata#Customers(Name)/$entity","Guid":"…","Name":"Ada"}

export function entityAnswer(context: string, body: string): string {
  const rest = body.slice(1)
  return `{"@odata.context":${JSON.stringify(context)}${rest === '}' ? '' : ','}${rest}`
}
