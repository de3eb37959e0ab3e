// Flat config: typescript-eslint's strict type-checked rules over the daemon, tests and benchmarks, and the
// house's import rules over the daemon (eslint/floors.js: imports run down the floors; no circles).
import tseslint from 'typescript-eslint';
import lvsd from './eslint/floors.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'webui/dist/**', '.cache/**', 'eslint.config.js', 'eslint/**', 'webui/vite.config.*'] },
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // node:test's test()/describe() return promises the runner already awaits.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
  {
    files: ['daemon/**/*.ts'],
    plugins: { lvsd },
    rules: {
      'lvsd/floors': 'error',
      'lvsd/no-cycle': 'error',
      // The netlink package's index loads every family it has (~110 ms of CPU at start): import its files.
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [{ name: 'netlink', message: "import from netlink/dist/raw.js, rt/rt.js, constants.js: the index costs ~110 ms at start", allowTypeImports: true }],
      }],
    },
  },
);
