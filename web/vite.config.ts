// The web client's build: one page, hashed assets in dist/, served by the gateway at /.
// `npm run dev` proxies the API to a gateway on FELT_GATEWAY (default http://127.0.0.1:8080).
import { defineConfig } from "vite";

const gateway = process.env.FELT_GATEWAY ?? "http://127.0.0.1:8080";

export default defineConfig({
  base: "./",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: false,
    // No "plugin timings" notice: on a loaded machine it is noise in every build log.
    rolldownOptions: { checks: { pluginTimings: false } },
  },
  server: { proxy: { "/poker.v1.": { target: gateway, changeOrigin: true } } },
});
