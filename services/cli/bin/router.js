#!/usr/bin/env node
// The operator CLI (`npm run router -- <command>`, or this file directly): compiles the TypeScript
// first only when a source changed since the last build, then runs the built CLI in this process.
"use strict";

const { buildIfStale } = require("../../../scripts/build");

if (buildIfStale(["ts"])) {
  require("../dist/main.js");
} else {
  process.stderr.write("router: the build failed (above)\n");
  process.exitCode = 1;
}
