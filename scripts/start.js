#!/usr/bin/env node
// `npm start`: builds what changed since the last build (nothing, usually: a few milliseconds), then
// runs the one-process default in this same process. npm runs it as `node --v8-pool-size=1
// scripts/start.js`, so the server keeps the flag and there is no second node between npm and it.
"use strict";

const { buildIfStale } = require("./build");

if (buildIfStale()) {
  require("../services/embedded/dist/main.js");
} else {
  process.stderr.write("router failed to start: the build failed (above)\n");
  process.exitCode = 1;
}
