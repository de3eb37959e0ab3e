// The panel's build: `vite build webui` → webui/dist, served by the API at /. No Preact plugin needed:
// esbuild's automatic JSX runtime with preact as the import source.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: './',
  publicDir: false,
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // the CSP allows no inline code: keep every asset a file, and no polyfill injected inline
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:9180', '/metrics': 'http://127.0.0.1:9180' } },
});
