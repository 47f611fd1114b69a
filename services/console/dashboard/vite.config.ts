import { defineConfig } from "vite";

// Preact through esbuild's automatic JSX runtime: no framework plugin needed. The build emits only
// external scripts and stylesheets (no inline code), which the console's Content-Security-Policy
// requires (script-src 'self', style-src 'self').
export default defineConfig({
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsDir: "assets",
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: "es2022",
  },
});
