#!/usr/bin/env node
// Builds what changed since the last build, and only that. `npm install` runs it once (the `prepare`
// step); `npm start` and the `router` CLI run it before they start, where it costs a few
// milliseconds when nothing changed. `tsc -b` is not that check: it loads the compiler (about half a
// second) even when every project is up to date, and the dashboard's build has no up-to-date check.
//
// A target is stale when its stamp is missing, one of its outputs is missing, or any input file or
// directory was modified after the build the stamp records began (a directory's time moves when a
// file in it is added, renamed or deleted; `git pull` and `git checkout` touch what they change).
//
//   node scripts/build.js              build the stale targets (what `npm start` does)
//   node scripts/build.js --only ts    only the TypeScript projects (what the CLI needs)
//   node scripts/build.js --install    as `npm install` runs it: a failed build is reported, not fatal
//   node scripts/build.js --check      print whether each target is stale; build nothing (exit 1 if one is)
"use strict";

const { spawnSync } = require("node:child_process");
const { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");

const ROOT = join(__dirname, "..");
// Under node_modules: `npm ci` starts from an empty node_modules, so a reinstall rebuilds once.
const STAMP_DIR = join(ROOT, "node_modules", ".cache", "router-build");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const DASHBOARD = join(ROOT, "services", "gateway", "dashboard");
// npm writes it on every install: new dependencies (their types, the dashboard's libraries) rebuild.
const INSTALLED = join(ROOT, "node_modules", ".package-lock.json");

/** The workspaces' own directories that hold TypeScript projects (the dashboard is its own target). */
function projectDirs() {
  const dirs = [join(ROOT, "bench")];
  for (const group of ["libs", "services"]) {
    for (const name of readdirSync(join(ROOT, group))) dirs.push(join(ROOT, group, name));
  }
  return dirs.filter((d) => existsSync(join(d, "tsconfig.json")));
}

const TARGETS = {
  ts: {
    what: "TypeScript (tsc -b)",
    inputs: () => [
      join(ROOT, "tsconfig.json"),
      join(ROOT, "tsconfig.base.json"),
      join(ROOT, "package.json"),
      INSTALLED,
      ...projectDirs().flatMap((d) => [join(d, "src"), join(d, "tsconfig.json"), join(d, "package.json")]),
    ],
    outputs: () => [join(ROOT, "services", "embedded", "dist", "main.js"), join(ROOT, "services", "cli", "dist", "main.js")],
    command: [process.execPath, [TSC, "-b"], ROOT],
  },
  dashboard: {
    what: "the dashboard (vite)",
    inputs: () => [
      INSTALLED,
      ...["src", "index.html", "vite.config.ts", "tsconfig.json", "package.json"].map((f) => join(DASHBOARD, f)),
    ],
    outputs: () => [join(DASHBOARD, "dist", "index.html")],
    command: ["npm", ["run", "--silent", "build", "-w", "@router/dashboard"], ROOT],
  },
};

/** The latest modification time (ms) under `path`: files and directories, recursively. */
function newestMtime(path) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0; // an input that does not exist (an optional file) changes nothing
  }
  let newest = st.mtimeMs;
  if (st.isDirectory()) {
    for (const entry of readdirSync(path)) {
      if (entry === "node_modules" || entry === "dist") continue;
      newest = Math.max(newest, newestMtime(join(path, entry)));
    }
  }
  return newest;
}

const stampPath = (name) => join(STAMP_DIR, `${name}.json`);

/** Why `name` must be built, or null when its last build is current. */
function staleness(name) {
  const target = TARGETS[name];
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampPath(name), "utf8"));
  } catch {
    return "never built here";
  }
  const missing = target.outputs().find((f) => !existsSync(f));
  if (missing) return `${missing.slice(ROOT.length + 1)} is missing`;
  for (const input of target.inputs()) {
    if (newestMtime(input) > stamp.startedAt) return `${input.slice(ROOT.length + 1)} changed`;
  }
  return null;
}

function build(name, why) {
  const target = TARGETS[name];
  const [cmd, args, cwd] = target.command;
  // The stamp records when the build began: a file saved while it ran makes the next start build again.
  const startedAt = Date.now();
  process.stderr.write(`router: building ${target.what}: ${why}\n`);
  // Everything the build prints goes to stderr: a CLI command's stdout is its own (scripts parse it).
  const result = spawnSync(cmd, args, { cwd, stdio: ["ignore", 2, 2] });
  if (result.status !== 0) return false;
  try {
    mkdirSync(STAMP_DIR, { recursive: true });
    writeFileSync(stampPath(name), `${JSON.stringify({ startedAt, ms: Date.now() - startedAt })}\n`);
  } catch (err) {
    // A checkout this user may not write to (built by another): it is built; the next start checks again.
    process.stderr.write(`router: could not record the build (${err.code ?? err.message}); the next start builds again\n`);
  }
  process.stderr.write(`router: built ${target.what} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s\n`);
  return true;
}

/** Builds the stale ones of `names`; resolves whether every one is now current. */
function buildIfStale(names = Object.keys(TARGETS)) {
  for (const name of names) {
    const why = staleness(name);
    if (why && !build(name, why)) return false;
  }
  return true;
}

function main(argv) {
  const only = argv.includes("--only") ? argv[argv.indexOf("--only") + 1] : undefined;
  if (only !== undefined && !(only in TARGETS)) {
    process.stderr.write(`--only: one of ${Object.keys(TARGETS).join(", ")}\n`);
    return 2;
  }
  const names = only ? [only] : Object.keys(TARGETS);
  if (argv.includes("--check")) {
    let stale = false;
    for (const name of names) {
      const why = staleness(name);
      stale ||= why !== null;
      process.stdout.write(`${name}: ${why ?? "current"}\n`);
    }
    return stale ? 1 : 0;
  }
  if (buildIfStale(names)) return 0;
  if (argv.includes("--install")) {
    // The dependencies are installed; a source that does not compile is for `npm start` to report.
    process.stderr.write("router: the build failed (above); the dependencies are installed, and `npm start` builds again\n");
    return 0;
  }
  return 1;
}

module.exports = { buildIfStale, staleness };

if (require.main === module) process.exitCode = main(process.argv.slice(2));
