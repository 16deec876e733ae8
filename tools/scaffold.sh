#!/usr/bin/env bash
# Creates the package.json / project.json / tsconfig.json of a lib or app.
# usage: tools/scaffold.sh libs|apps NAME SCOPE TYPE
set -euo pipefail
kind=$1; name=$2; scope=$3; type=$4
dir=$kind/$name
mkdir -p "$dir/src"
pkgname="@sluice/$name"
[ -f "$dir/package.json" ] || cat > "$dir/package.json" <<J
{ "name": "$pkgname", "version": "0.0.0", "private": true, "type": "module", "exports": { ".": "./src/index.ts" } }
J
ptype=library; [ "$kind" = apps ] && ptype=application
build=""
[ "$kind" = apps ] && build=',
    "build": { "command": "node tools/build-app.mjs '"$name"'" },
    "serve": { "command": "tsx apps/'"$name"'/src/main.ts", "continuous": true }'
[ -f "$dir/project.json" ] || cat > "$dir/project.json" <<J
{
  "name": "$name",
  "\$schema": "../../node_modules/nx/schemas/project-schema.json",
  "sourceRoot": "$dir/src",
  "projectType": "$ptype",
  "tags": ["scope:$scope", "type:$type"],
  "targets": {
    "typecheck": { "command": "tsc -p $dir/tsconfig.json" },
    "lint": { "command": "eslint $dir" },
    "test": { "command": "vitest run --project $name" }$build
  }
}
J
[ -f "$dir/tsconfig.json" ] || cat > "$dir/tsconfig.json" <<J
{ "extends": "../../tsconfig.base.json", "include": ["src/**/*.ts", "test/**/*.ts"] }
J
