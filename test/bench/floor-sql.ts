// The floor's SQL: one hand-written statement per operation of the workload, each building its
// whole answer as JSON inside PostgreSQL, so the floor process only moves text. Every read returns
// one row with one text column: a JSON object that lacks only "@odata.context", which the server
// splices in (its value depends on the server's own address).
//
// Literals of the workload's URLs are written into the reads (the floor answers exactly those
// URLs); keys and write values are parameters. Object shape follows OData's minimal metadata as
// entityctl writes it: "@odata.etag" from "_Version" and a keyed hash of the row's xmin
// (W/"3.9f86d081884c", as server/persistence/entity-tag.ts; the floor's secret is a constant
// of its own), then "Guid", then the selected properties.

const FLOOR_TAG_SECRET = 'floor-etag-secret-0123456789abcdef'
const etag = (alias: string) => `'W/"' || ${alias}."_Version" || '.' || substr(md5('${FLOOR_TAG_SECRET}' || ${alias}.xmin::text), 1, 12) || '"'`

/** Q1 `Customers(<guid>)?$select=Name,Email,City` */
export const customerByKey = `
SELECT json_build_object('@odata.etag', ${etag('c')}, 'Guid', c."Guid",
         'Name', c."Name", 'Email', c."Email", 'City', c."City")::text
  FROM "Customer" c WHERE c."Guid" = $1`

/** Q2 `Orders?$filter=Status eq 'Open' and Total gt 500&$orderby=OrderDate desc,Number&$top=50` */
export const openOrdersPage = `
SELECT json_build_object('value', coalesce(json_agg(json_build_object('@odata.etag', ${etag('o')}, 'Guid', o."Guid",
         'Number', o."Number", 'OrderDate', o."OrderDate", 'Total', o."Total")
         ORDER BY o."OrderDate" DESC, o."Number"), '[]'))::text
  FROM (SELECT *, xmin FROM "Order" WHERE "Status" = 'Open' AND "Total" > 500
         ORDER BY "OrderDate" DESC, "Number" LIMIT 50) o`

/** Q3 `Orders?$filter=Customer/Country eq 'DE'&$top=100&$orderby=Number&$count=true` */
export const germanOrdersWithCount = `
SELECT json_build_object(
         '@odata.count', (SELECT count(*) FROM "Order" o JOIN "Customer" c ON c."Guid" = o."Customer_Guid"
                           WHERE c."Country" = 'DE'),
         'value', coalesce(json_agg(json_build_object('@odata.etag', ${etag('o')}, 'Guid', o."Guid",
           'Number', o."Number", 'Total', o."Total") ORDER BY o."Number"), '[]'))::text
  FROM (SELECT o.*, o.xmin FROM "Order" o JOIN "Customer" c ON c."Guid" = o."Customer_Guid"
         WHERE c."Country" = 'DE' ORDER BY o."Number" LIMIT 100) o`

/** Q4 `Customers?$filter=startswith(Name,'A')&…&$expand=Orders(…;$top=5;$expand=Lines(…))` */
export const customersWithOrdersAndLines = `
SELECT json_build_object('value', coalesce(json_agg(json_build_object('@odata.etag', ${etag('c')}, 'Guid', c."Guid",
         'Name', c."Name",
         'Orders', (SELECT coalesce(json_agg(json_build_object('@odata.etag', ${etag('o')}, 'Guid', o."Guid",
                      'Number', o."Number", 'Total', o."Total",
                      'Lines', (SELECT coalesce(json_agg(json_build_object('@odata.etag', ${etag('l')}, 'Guid', l."Guid",
                                   'Quantity', l."Quantity", 'LineTotal', l."LineTotal") ORDER BY l."Guid"), '[]')
                                  FROM "OrderLine" l WHERE l."Order_Guid" = o."Guid"))
                      ORDER BY o."OrderDate" DESC, o."Number"), '[]')
                      FROM (SELECT *, xmin FROM "Order" WHERE "Customer_Guid" = c."Guid"
                             ORDER BY "OrderDate" DESC, "Number" LIMIT 5) o))
         ORDER BY c."Name", c."Guid"), '[]'))::text
  FROM (SELECT *, xmin FROM "Customer" WHERE "Name" LIKE 'A%' ORDER BY "Name", "Guid" LIMIT 20) c`

/** Q5 `Orders?$apply=filter(Status eq 'Closed')/groupby((Customer/Country),aggregate(Total with sum as Revenue))` */
export const revenueByCountry = `
SELECT json_build_object('value', coalesce(json_agg(json_build_object(
         'Customer', json_build_object('Country', t."Country"), 'Revenue', t."Revenue")), '[]'))::text
  FROM (SELECT c."Country", sum(o."Total") AS "Revenue"
          FROM "Order" o JOIN "Customer" c ON c."Guid" = o."Customer_Guid"
         WHERE o."Status" = 'Closed' GROUP BY c."Country") t`

/** Q6 `Orders?$filter=Lines/any(l:l/Quantity gt 8)&$orderby=Number&$top=50&$select=Number` */
export const ordersWithLargeLine = `
SELECT json_build_object('value', coalesce(json_agg(json_build_object('@odata.etag', ${etag('o')}, 'Guid', o."Guid",
         'Number', o."Number") ORDER BY o."Number"), '[]'))::text
  FROM (SELECT o.*, o.xmin FROM "Order" o
         WHERE EXISTS (SELECT 1 FROM "OrderLine" l WHERE l."Order_Guid" = o."Guid" AND l."Quantity" > 8)
         ORDER BY o."Number" LIMIT 50) o`

/** Q7 `Products?$filter=contains(Name,'steel')&$select=Code,Name,Price&$orderby=Price desc,Code&$top=25` */
export const steelProducts = `
SELECT json_build_object('value', coalesce(json_agg(json_build_object('@odata.etag', ${etag('p')}, 'Guid', p."Guid",
         'Code', p."Code", 'Name', p."Name", 'Price', p."Price") ORDER BY p."Price" DESC, p."Code"), '[]'))::text
  FROM (SELECT *, xmin FROM "Product" WHERE "Name" LIKE '%steel%' ORDER BY "Price" DESC, "Code" LIMIT 25) p`

/** `Orders(<guid>)?$select=Total`: the runner's check after W1 and W2. */
export const orderTotalByKey = `
SELECT json_build_object('@odata.etag', ${etag('o')}, 'Guid', o."Guid", 'Total', o."Total")::text
  FROM "Order" o WHERE o."Guid" = $1`

/**
 * W1 deep insert: the order and its lines in one statement. Lines take UnitPrice from their
 * product; LineTotal, Total and the Titles are computed here. The lines' foreign key to the new
 * order holds because PostgreSQL checks it at the end of the statement.
 * $1 Guid, $2 Number, $3 Customer, $4 OrderDate, $5 Status, $6 line Guids, $7 products, $8 quantities.
 */
export const createOrderWithLines = `
WITH line AS (
  SELECT x."Guid", x."Product_Guid", x."Quantity", p."Price" AS "UnitPrice", p."Code"
    FROM unnest($6::uuid[], $7::uuid[], $8::int[]) AS x("Guid", "Product_Guid", "Quantity")
    JOIN "Product" p ON p."Guid" = x."Product_Guid"
), new_order AS (
  INSERT INTO "Order" ("Guid", "Number", "Customer_Guid", "OrderDate", "Status", "Total", "Title")
  SELECT $1::uuid, $2::int, $3::uuid, $4::date, $5::text,
         (SELECT coalesce(sum(l."Quantity" * l."UnitPrice"), 0) FROM line l), 'Order ' || $2::int
   WHERE (SELECT count(*) FROM line) = cardinality($6::uuid[])
  RETURNING *, xmin
), new_lines AS (
  INSERT INTO "OrderLine" ("Guid", "Order_Guid", "Product_Guid", "Quantity", "UnitPrice", "LineTotal", "Title")
  SELECT l."Guid", o."Guid", l."Product_Guid", l."Quantity", l."UnitPrice", l."Quantity" * l."UnitPrice",
         o."Title" || ' / ' || l."Code"
    FROM line l CROSS JOIN new_order o
)
SELECT json_build_object('@odata.etag', ${etag('o')}, 'Guid', o."Guid", 'Total', o."Total")::text FROM new_order o`

/**
 * W2 `PATCH OrderLines(<guid>)` with a new Quantity: LineTotal and the order's Total follow.
 * Total moves by the line's change: under concurrent patches of one order each UPDATE of "Order"
 * re-reads the latest Total (READ COMMITTED), so the deltas add up. $1 line Guid, $2 Quantity.
 */
export const patchLineQuantity = `
WITH old AS (
  SELECT "Guid", "LineTotal", "UnitPrice" FROM "OrderLine" WHERE "Guid" = $1::uuid FOR UPDATE
), line AS (
  UPDATE "OrderLine" l SET "Quantity" = $2::int, "LineTotal" = $2::int * old."UnitPrice", "_Version" = l."_Version" + 1
    FROM old WHERE l."Guid" = old."Guid"
  RETURNING l."Order_Guid", l."LineTotal" - old."LineTotal" AS delta
)
UPDATE "Order" o SET "Total" = o."Total" + line.delta, "_Version" = o."_Version" + 1
  FROM line WHERE o."Guid" = line."Order_Guid"`

/** `DELETE Orders(<guid>)`: lines go with their order (ON DELETE CASCADE). */
export const deleteOrder = `DELETE FROM "Order" WHERE "Guid" = $1`
