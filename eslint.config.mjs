// Type-aware lint for the TypeScript sources; formatting is Prettier's job (eslint-config-prettier turns off the rules it owns).
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/** Where a value is `any` by the library's own typing and its shape is checked another way. */
const ANY_IS_FINE = Object.fromEntries(
  ['no-unsafe-assignment', 'no-unsafe-member-access', 'no-unsafe-argument', 'no-unsafe-return', 'no-unsafe-call'].map((rule) => [
    `@typescript-eslint/${rule}`,
    'off',
  ]),
);

export default defineConfig(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', 'bench/results/**', 'bench/.logs/**', 'test/.logs/**'],
  },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    rules: {
      // A leading underscore marks a value kept on purpose (a destructured field dropped from a copy, a callback's unused argument).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Input checks reject control characters on purpose (JSON bodies, card fields, operator names), so the regexes name them.
      'no-control-regex': 'off',
      // `let self` assigned after a closure that reads it is declared (a server's handler needs the object the server is part of).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // TypeORM's QueryRunner.query returns `any`: a migration's rows are typed by its SQL, and migrations never change once shipped.
    files: ['libs/persistence/src/migrations/**/*.ts'],
    rules: {
      ...ANY_IS_FINE,
    },
  },
  {
    // Tests read HTTP answers, pg rows and log lines as loose JSON (one `any` alias, declared with a disable comment) and
    // assert on their shape, which is what an expectation is for; their fakes implement async interfaces without awaiting.
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      ...ANY_IS_FINE,
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Small rooms: a production file holds one concept and a function one step, each short enough to be read whole.
    // Blank and comment lines do not count. Specs and test/ are not production code: a table of cases is long by nature.
    files: ['apps/**/*.ts', 'libs/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Shipped migrations are immutable history: a long `up` stays as it ran.
    files: ['libs/persistence/src/migrations/**/*.ts'],
    rules: { 'max-lines': 'off', 'max-lines-per-function': 'off' },
  },
  {
    // The few plain JavaScript files are CommonJS config for Node and Jest; they are outside the TypeScript project.
    files: ['**/*.js', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly', console: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  prettier,
  {
    // After Prettier's config, which turns max-len off: Prettier wraps code but not comments. SQL and message texts stay whole
    // on one line so a grep for them finds them.
    rules: {
      'max-len': [
        'error',
        {
          code: 140,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
          ignoreUrls: true,
          ignorePattern: '^\\s*// eslint-disable',
        },
      ],
    },
  },
);
