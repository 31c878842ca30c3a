// The one parameter collector of every statement the server builds: reads (odata/sql), the
// searches of rules and methods (where.ts), the unit of work's loads and writes, a workflow's
// version check and key rotation. A value goes in, its placeholder comes out, so no value is
// ever written into the text of a statement (Kysely's appendValue):
//
//   const params = new SqlParameters()
//   `t."Total" > ${params.add(100, 'numeric')}`   →  t."Total" > $1::numeric,  params.values = [100]

export class SqlParameters {
  readonly values: unknown[] = []

  /** The placeholder of `value`: `$n`, or `$n::cast` when PostgreSQL cannot infer the type from its use. */
  add(value: unknown, cast?: string): string {
    const n = this.values.push(value)
    return cast ? `$${n}::${cast}` : `$${n}`
  }

  /** How many values the statement takes so far; the next one is $(count + 1). */
  get count(): number {
    return this.values.length
  }
}
