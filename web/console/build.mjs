// Builds the console into ../../internal/api/console/dist: one bundled,
// minified JS and CSS file, each named by its content hash, and index.html
// naming them. The output is committed; TestConsoleDistUpToDate rebuilds it
// and fails when it differs.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.env.WEFT_CONSOLE_OUT || join(here, "../../internal/api/console/dist");

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "assets"), { recursive: true });

const result = await esbuild.build({
  entryPoints: [join(here, "src/main.js")],
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  outdir: join(out, "assets"),
  entryNames: "[name]-[hash]",
  metafile: true,
  legalComments: "eof",
  logLevel: "warning",
});

const names = {};
for (const file of Object.keys(result.metafile.outputs)) {
  names[file.endsWith(".css") ? "css" : "js"] = basename(file);
}
const html = readFileSync(join(here, "src/index.html"), "utf8")
  .replace("%CSS%", "/console/assets/" + names.css)
  .replace("%JS%", "/console/assets/" + names.js);
writeFileSync(join(out, "index.html"), html);
console.log("console built:", names.js, names.css);
