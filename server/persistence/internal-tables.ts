// Tables of the service itself (credentials, tokens, PATs, workflows) in every tenant
// database. They are not entities: no OData route reaches them, and only their subsystem
// reads them, with plain parameterised SQL. Each statement is idempotent; migrate runs them
// all after the entity schema. Names start with _ so they can never clash with an entity.

import { quoteIdentifier as quote } from './sql.ts'

export const INTERNAL_TABLES: readonly string[] = [
  `create table if not exists "_Credential" (
     "UserGuid" uuid primary key references "User" ("Guid") on delete cascade,
     "PasswordHash" text not null,
     "UpdatedAt" timestamptz not null default now())`,
  `create table if not exists "_RefreshToken" (
     "Id" uuid primary key,
     "UserGuid" uuid not null references "User" ("Guid") on delete cascade,
     "FamilyId" uuid not null,
     "TokenHash" bytea not null unique,
     "CreatedAt" timestamptz not null default now(),
     "ExpiresAt" timestamptz not null,
     "UsedAt" timestamptz,
     "RevokedAt" timestamptz)`,
  `create index if not exists "_RefreshToken_family" on "_RefreshToken" ("FamilyId")`,
  // Sign-in counters (auth/sign-in-throttle.ts), one per user name, client address and tenant;
  // they replace "_SignInThrottle", which counted only user names.
  `drop table if exists "_SignInThrottle"`,
  `create table if not exists "_SignInLimit" (
     "Scope" text not null,
     "Key" text not null,
     "Failures" int not null,
     "Pending" int not null,
     "WindowStart" timestamptz not null,
     "LockedUntil" timestamptz,
     primary key ("Scope", "Key"))`,
  // Personal access tokens (auth/pats.ts): the secret only as its SHA-256; the scope as
  // responsibility rows, so a responsibility removed by sync leaves every PAT at once.
  `create table if not exists "_Pat" (
     "Id" uuid primary key,
     "UserGuid" uuid not null references "User" ("Guid") on delete cascade,
     "Name" text not null,
     "SecretHash" bytea not null unique,
     "ExpirationDays" int not null,
     "CreatedAt" timestamptz not null default now(),
     "ExpiresAt" timestamptz not null,
     "LastUsedAt" timestamptz,
     "RevokedAt" timestamptz,
     "DisabledAt" timestamptz,
     "IsFullAccessFallback" boolean not null default false)`,
  `create index if not exists "_Pat_user" on "_Pat" ("UserGuid")`,
  `create table if not exists "_PatResponsibility" (
     "PatId" uuid not null references "_Pat" ("Id") on delete cascade,
     "ResponsibilityGuid" uuid not null references "Responsibility" ("Guid") on delete cascade,
     primary key ("PatId", "ResponsibilityGuid"))`,
  // Any write to what access is computed from announces itself on this channel of the tenant
  // database, whichever path made it (API, CLI, SQL), for tools that listen there. The servers
  // do not: they hear the writers' announcements on one connection per database server
  // (auth/access-listener.ts).
  `create or replace function "_entityctl_access_changed"() returns trigger language plpgsql as $$
   begin
     perform pg_notify('entityctl_access', TG_TABLE_NAME);
     return null;
   end $$`,
  ...['User', 'Role', 'UserRole', 'RoleResponsibility', 'Responsibility', '_PatResponsibility'].map(
    (table) =>
      `create or replace trigger "_access_changed" after insert or update or delete or truncate on ${quote(table)}
         for each statement execute function "_entityctl_access_changed"()`,
  ),
  // LastUsedAt changes often and concerns no cache: it does not announce itself.
  `create or replace trigger "_access_changed" after insert or delete or update of
     "SecretHash", "ExpiresAt", "RevokedAt", "DisabledAt", "IsFullAccessFallback", "UserGuid" on "_Pat"
     for each statement execute function "_entityctl_access_changed"()`,
  // A full-access fallback PAT is disabled for good when its owner gains a role or loses full
  // access (specification 3.2), in the same transaction as the change, whatever made it.
  `create or replace function "_entityctl_disable_fallback_pats"() returns trigger language plpgsql as $$
   declare owner uuid;
   begin
     if TG_TABLE_NAME = 'UserRole' then
       owner := new."User_Guid";
     elsif coalesce(new."HasFullAccess", false) then
       return null;
     else
       owner := new."Guid";
     end if;
     update "_Pat" set "DisabledAt" = now()
      where "UserGuid" = owner and "IsFullAccessFallback" and "DisabledAt" is null;
     return null;
   end $$`,
  `create or replace trigger "_disable_fallback_pats" after insert or update of "User_Guid" on "UserRole"
     for each row execute function "_entityctl_disable_fallback_pats"()`,
  `create or replace trigger "_disable_fallback_pats" after update of "HasFullAccess" on "User"
     for each row execute function "_entityctl_disable_fallback_pats"()`,
  // A flush (persistence/unit-of-work.ts) is one statement that ends by checking every row it
  // updated or deleted still had the version it was read with; this aborts it otherwise, with
  // the SQLSTATE of a serialization failure, which tells the session to run the unit again.
  `create or replace function "_conflict"(reason text) returns int language plpgsql as $$
   begin
     raise exception using errcode = '40001', message = reason;
   end $$`,
  `create table if not exists "_EncryptionCheck" (
     "Id" int primary key check ("Id" = 1),
     "Canary" text not null)`,
  // The secret ETags hash the xmin with (entity-tag.ts), random, made once with the database
  // and carried with its data (backup, restore, move). Made in SQL so that the statement stays
  // idempotent: gen_random_uuid draws from PostgreSQL's cryptographic random source
  // (pg_strong_random); two of them, 244 random bits.
  `create table if not exists "_EntityTagKey" (
     "Id" int primary key check ("Id" = 1),
     "Secret" text not null default replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))`,
  `insert into "_EntityTagKey" ("Id") values (1) on conflict ("Id") do nothing`,
  // Workflows (workflows/workflow-store.ts): an open workflow is these rows and nothing else,
  // so any instance can serve its next request and a restart loses nothing. A request is kept
  // as its write plans and the rows they wrote (Body: `{ format, plans, rows }`, read by
  // workflows/workflow-rebuild.ts) with what it took from the world (At, Guids) and the row
  // versions it found (Touched): the next request puts the rows back, the commit applies the
  // plans again; the last request keeps its answer for a safe retry.
  `create table if not exists "_Workflow" (
     "Id" uuid primary key,
     "UserGuid" uuid not null references "User" ("Guid") on delete cascade,
     "CreatedAt" timestamptz not null default now(),
     "LastUsedAt" timestamptz not null default now(),
     "ExpiresAt" timestamptz not null,
     "LastIndex" int not null default 0,
     "Status" text not null default 'open' check ("Status" in ('open', 'committed')))`,
  `create index if not exists "_Workflow_expires" on "_Workflow" ("ExpiresAt")`,
  // A start counts its user's open workflows (Workflow:MaxOpenPerUser), and deleting a user
  // finds theirs (the cascade): by this index, not a scan of every workflow of the tenant.
  `create index if not exists "_Workflow_user" on "_Workflow" ("UserGuid")`,
  `create table if not exists "_WorkflowRequest" (
     "WorkflowId" uuid not null references "_Workflow" ("Id") on delete cascade,
     "Index" int not null,
     "Method" text not null,
     "Path" text not null,
     "Headers" jsonb not null,
     "Body" json,
     "At" timestamptz not null,
     "Guids" jsonb not null,
     "Touched" jsonb not null,
     "ResponseStatus" int not null,
     "ResponseHeaders" jsonb,
     "ResponseBody" text,
     primary key ("WorkflowId", "Index"))`,
  // The access the answer was given with ({ fullAccess, responsibilities }): a safe retry gives
  // it again only to a caller who still holds that much (workflows/workflow-routes.ts).
  `alter table "_WorkflowRequest" add column if not exists "Access" jsonb`,
]
