// ESLint with type-checked rules (house style): floating promises, type-only imports, no console
// outside src/output — and the layers of the tree (docs/architecture.md, "The floors"), enforced with
// no-restricted-imports: a module imports only from its own floor or below.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layerBlocks } from './eslint.layers.js';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.bench-tmp/**',
      'coverage/**',
      'bench/**',
      'scripts/**',
      'test/**/fixtures/**',
      'bin/**',
      '*.config.*',
      'eslint.layers.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'no-console': 'error',
      'no-control-regex': 'off',
      // commands are async by contract; many do synchronous work inside
      '@typescript-eslint/require-await': 'off',
      // disagrees with tsc under noUncheckedIndexedAccess; tsc is the authority
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
  ...layerBlocks(import.meta.dirname),
  {
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
