// `npm test`: the unit tests of the client's pure logic (src/**/*.test.ts). They are compiled
// with the project's own TypeScript (tsc, as `make web` type-checks) into
// node_modules/.felt-tests (where `preact` still resolves), then run by Node's test runner.
// Node 20 has no TypeScript stripping and its --test takes no globs, so both are done here.
import { execFileSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const out = "node_modules/.felt-tests";
const tests = readdirSync("src", { recursive: true })
  .map(String)
  .filter((f) => f.endsWith(".test.ts") && !f.startsWith("gen"))
  .map((f) => join("src", f));
rmSync(out, { recursive: true, force: true });
const tsc = join("node_modules", ".bin", process.platform === "win32" ? "tsc.cmd" : "tsc");
execFileSync(
  tsc,
  ["--ignoreConfig", "--rootDir", "src", "--outDir", out, "--module", "esnext", "--target", "es2022", "--moduleResolution", "bundler", "--skipLibCheck", "--strict", "--lib", "es2022,dom", "--types", "node", ...tests],
  { stdio: "inherit" },
);
const compiled = tests.map((f) => join(out, f.slice("src/".length).replace(/\.ts$/, ".js")));
execFileSync(process.execPath, ["--test", ...compiled], { stdio: "inherit" });
