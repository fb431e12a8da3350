// Unit tests run in plain Node: `vscode` exists only inside the extension host, so tests
// import the extension's pure modules and, where a module needs the API, a small fake of it.
import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
  },
  resolve: {
    alias: { vscode: fileURLToPath(new URL('./test/fakes/vscode.ts', import.meta.url)) },
  },
});
