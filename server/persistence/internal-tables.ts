// Tables of the service itself (credentials, tokens, PATs, workflows) in every tenant
// database. They are not entities: no OData route reaches them, and only their subsystem
// reads them, with plain parameterised SQL. Each statement is idempotent; migrate runs them
// all after the entity schema. Names start with _ so they can never clash with an entity.

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
  `create table if not exists "_SignInThrottle" (
     "Username" text primary key,
     "Failures" int not null,
     "WindowStart" timestamptz not null,
     "LockedUntil" timestamptz)`,
]
