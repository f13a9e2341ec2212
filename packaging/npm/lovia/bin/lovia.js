#!/usr/bin/env node
// Runs the prebuilt lovia binary that npm installed for this platform: each platform's
// binary is an optional dependency (@lovia-dev/lovia-<os>-<arch>) that npm installs only
// where its "os" and "cpu" match, the pattern Codex's and esbuild's packages use.
"use strict";
const { spawnSync } = require("child_process");
const path = require("path");

const pkg = `@lovia-dev/lovia-${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "lovia.exe" : "lovia";
let bin;
try {
  bin = require.resolve(`${pkg}/bin/${exe}`);
} catch (e) {
  console.error(
    `lovia: no prebuilt binary for ${process.platform}/${process.arch} (package ${pkg} is not installed).\n` +
      "  Reinstall without --no-optional / --omit=optional, or install another way:\n" +
      "  https://github.com/lovia-dev/lovia#install"
  );
  process.exit(1);
}
const res = spawnSync(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: false });
if (res.error) {
  console.error(`lovia: could not start ${path.basename(bin)}: ${res.error.message}`);
  process.exit(1);
}
if (res.signal) {
  // Die of the same signal so the shell sees what the binary saw.
  process.kill(process.pid, res.signal);
}
process.exit(res.status === null ? 1 : res.status);
