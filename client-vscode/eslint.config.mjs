// Type-aware lint for the extension sources and unit tests (the e2e driver is plain JS run by
// Node 24 outside this package and is linted only for syntax).
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', 'e2e/fixtures/**', '*.vsix'] },
  eslint.configs.recommended,
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    extends: [...tseslint.configs.strictTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // vscode.Disposable is declared as a class, but the API itself returns and accepts plain
      // `{ dispose() }` objects (event subscriptions, tree views); the rule flags every one.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests poke at fakes; non-null assertions keep them short, and fakes of async APIs
      // return promises without awaiting anything.
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['e2e/**/*.js', '*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', require: 'readonly', __dirname: 'readonly', module: 'writable', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly', URL: 'readonly', Buffer: 'readonly' },
      sourceType: 'commonjs',
    },
  },
  {
    files: ['*.mjs'],
    languageOptions: { sourceType: 'module' },
  },
);
