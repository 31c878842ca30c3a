-- The floor's database: the demo model stored exactly as entityctl stores it (table per entity,
-- column per property, "<Reference>_Guid" foreign keys, "_Version" row version, string columns
-- in the "C" collation), so both systems answer from the same tables and the same indexes.
-- Indexes: entityctl's conventions (primary keys, every foreign key, natural keys) and those of
-- WORKLOAD.md §3a, which entityctl's bench plugin declares (plugin/sales.ts): the floor may be
-- faster only by doing less work per request, not by a better physical design. Each side sorts
-- by its own null order: the floor's ORDER BY "OrderDate" DESC puts nulls first, entityctl's
-- (OData's) last, so the floor's descending keys are plain DESC.

CREATE TABLE "Product" (
  "Guid"     uuid PRIMARY KEY,
  "Code"     varchar(20) COLLATE "C" NOT NULL,
  "Name"     varchar(100) COLLATE "C" NOT NULL,
  "Category" varchar(40) COLLATE "C",
  "Price"    numeric(12,2) NOT NULL,
  "Title"    varchar(121) COLLATE "C",
  "_Version" integer NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX "Product_Code_unique" ON "Product" ("Code");

CREATE TABLE "Customer" (
  "Guid"        uuid PRIMARY KEY,
  "Name"        varchar(100) COLLATE "C" NOT NULL,
  "Email"       varchar(254) COLLATE "C",
  "City"        varchar(60) COLLATE "C",
  "Country"     varchar(2) COLLATE "C",
  "CreditLimit" numeric(12,2),
  "Title"       varchar(100) COLLATE "C",
  "_Version"    integer NOT NULL DEFAULT 1
);
CREATE INDEX "Customer_index_1" ON "Customer" ("Country", "Guid");
CREATE INDEX "Customer_index_2" ON "Customer" ("Name", "Guid");

CREATE TABLE "Order" (
  "Guid"          uuid PRIMARY KEY,
  "Number"        integer NOT NULL,
  "Customer_Guid" uuid NOT NULL REFERENCES "Customer" ("Guid") ON DELETE RESTRICT,
  "OrderDate"     date,
  "Status"        varchar(6) COLLATE "C",
  "Total"         numeric(14,2),
  "Title"         varchar(30) COLLATE "C",
  "_Version"      integer NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX "Order_Number_unique" ON "Order" ("Number");
CREATE INDEX "Order_Customer_Guid_index" ON "Order" ("Customer_Guid");
CREATE INDEX "Order_index_1" ON "Order" ("Customer_Guid", "OrderDate" DESC, "Number");
CREATE INDEX "Order_index_2" ON "Order" ("Status", "OrderDate" DESC, "Number");

CREATE TABLE "OrderLine" (
  "Guid"         uuid PRIMARY KEY,
  "Order_Guid"   uuid NOT NULL REFERENCES "Order" ("Guid") ON DELETE CASCADE,
  "Product_Guid" uuid NOT NULL REFERENCES "Product" ("Guid"),
  "Quantity"     integer NOT NULL,
  "UnitPrice"    numeric(12,2),
  "LineTotal"    numeric(14,2),
  "Title"        varchar(60) COLLATE "C",
  "_Version"     integer NOT NULL DEFAULT 1
);
CREATE INDEX "OrderLine_Order_Guid_index" ON "OrderLine" ("Order_Guid");
CREATE INDEX "OrderLine_Product_Guid_index" ON "OrderLine" ("Product_Guid");
CREATE INDEX "OrderLine_index_1" ON "OrderLine" ("Order_Guid", "Guid");
