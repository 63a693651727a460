// Prints the production bundle's size (raw and gzip) after `vite build`, so a build log shows
// when the client grows: what a first visit loads (index.html, the entry script and the
// styles) and everything in dist/ (with the languages loaded on demand). Reads web/dist/.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";

const dist = new URL("../dist/", import.meta.url).pathname;
const total = { raw: 0, gz: 0 };
const initial = { raw: 0, gz: 0 };
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) { walk(path); continue; }
    const data = readFileSync(path);
    const gz = gzipSync(data, { level: 9 }).length;
    total.raw += data.length;
    total.gz += gz;
    if (/^(index\.html|assets\/index-[^/]+\.(js|css))$/.test(relative(dist, path))) {
      initial.raw += data.length;
      initial.gz += gz;
    }
  }
}
walk(dist);
const kb = (n) => (n / 1024).toFixed(1);
console.log(`web bundle: first load ${kb(initial.raw)} KiB (${kb(initial.gz)} KiB gzip); all of dist/ ${kb(total.raw)} KiB (${kb(total.gz)} KiB gzip)`);
