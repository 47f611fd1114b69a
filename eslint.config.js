// Lint: typescript-eslint's type-checked rules. `make lint` and `npm test` run it.
const eslint = require("@eslint/js");
const tseslint = require("typescript-eslint");

module.exports = tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "libs/proto/src/generated/**", "**/*.js", "**/*.mjs", "services/console/dashboard/vite.config.ts"] },
  {
    languageOptions: {
      // One program for sources, tests and e2e, with @router/* resolved to sources (no build needed).
      parserOptions: { project: "./tsconfig.eslint.json", tsconfigRootDir: __dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  {
    files: ["libs/*/src/**/*.ts", "services/*/src/**/*.ts", "bench/src/**/*.ts"],
    extends: [eslint.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    rules: {
      // A leading underscore marks what is left out on purpose (a destructured field, an express
      // error handler's fourth argument).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
      // Ports are implemented with `async` even where nothing is awaited: a throw then becomes a
      // rejection, which is what every caller of a Promise-returning port handles.
      "@typescript-eslint/require-await": "off",
      // Cases that share a body are listed together, some with a comment naming who sends them.
      "no-fallthrough": ["error", { allowEmptyCase: true }],
    },
  },
  {
    // The dashboard (browser code, Preact): its own TypeScript program (DOM types, JSX).
    files: ["services/console/dashboard/src/**/*.{ts,tsx}"],
    extends: [eslint.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { project: "./services/console/dashboard/tsconfig.json", tsconfigRootDir: __dirname } },
  },
  {
    // Test support: fake providers and clients hand tests parsed JSON as `any`, read field by field
    // by assertions (a wrong field fails the assertion), so the any-safety rules stay out of it.
    files: ["libs/testkit/src/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
    },
  },
  {
    // Every promise is awaited, handled, or marked with `void` as left unawaited on purpose; each
    // `void` in src says beside it why nothing is lost (the call handles its own failure).
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
    },
  },
);
