// Lint: typescript-eslint (type-aware) + the dependency-direction rule of the architecture (docs/architecture.md):
//   server → session → {pipeline, s2s, transport} → turn → {providers, manifest, audio, errors, log, clock, events}
//   server → realtime → transport (the /v1/realtime link)
//   server, session → workflows → {manifest, errors, log, clock}
// pipeline, s2s and transport never import each other or session; the bottom tier imports
// nothing above it, and the provider toolkit (src/providers) only errors, log and clock.
// Enforced with import-x/no-restricted-paths over resolved paths.
import js from "@eslint/js";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import importX from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";

const bottom = ["./src/providers", "./src/manifest", "./src/audio", "./src/errors.ts", "./src/log.ts", "./src/log-redaction.ts", "./src/clock.ts", "./src/events.ts", "./src/small-map.ts", "./src/snapshot-list.ts", "./src/spread.ts"];
const above = (...dirs) => dirs.map((d) => `./src/${d}`);
const upperTier = above("session", "server", "cli.ts", "index.ts", "testing", "ai.ts");

const zones = [
  // The bottom tier is pure: nothing above it, and its parts stay apart.
  ...bottom.map((target) => ({
    target,
    from: [...above("pipeline", "s2s", "transport", "turn", "workflows"), ...upperTier],
    message: "the bottom tier (providers, manifest, audio, errors, log) imports nothing above it",
  })),
  // The provider toolkit: sockets, frames, close codes, retries; no config, no audio, no events.
  { target: "./src/providers", from: ["./src/manifest", "./src/audio", "./src/events.ts"], message: "the provider toolkit imports only errors, log and clock" },
  { target: "./src/manifest", from: "./src/audio", message: "manifest and audio stay independent" },
  // The turn engine's shared parts (ledger, turn state, playback clock): under every mode, over the bottom tier.
  { target: "./src/turn", from: [...above("pipeline", "s2s", "transport"), ...upperTier], message: "turn imports only the bottom tier" },
  { target: "./src/audio", from: "./src/manifest", message: "manifest and audio stay independent" },
  // The middle tier: siblings never import each other, nor the session or server.
  { target: "./src/pipeline", from: [...above("s2s", "transport"), ...upperTier], message: "pipeline imports only the bottom tier (providers, manifest, audio, errors, log)" },
  { target: "./src/s2s", from: [...above("pipeline", "transport"), ...upperTier], message: "s2s imports only the bottom tier (providers, manifest, audio, errors, log)" },
  { target: "./src/transport", from: [...above("pipeline", "s2s"), ...upperTier], message: "transport imports only the bottom tier (providers, manifest, audio, errors, log)" },
  // The Realtime front door (/v1/realtime): a link like the browser socket, over transport and the bottom tier.
  { target: "./src/realtime", from: [...above("pipeline", "s2s", "workflows"), ...upperTier], message: "realtime imports only transport, turn and the bottom tier: the server starts the session on its link" },
  { target: [...bottom, ...above("pipeline", "s2s", "transport", "turn")], from: "./src/realtime", message: "only the server imports realtime" },
  // Durable workflow runs: the engine and its adapters, over the bottom tier (author API, errors, log,
  // clock); the session (ctx.workflows) and the server (HTTP API) use it, the voice path never does.
  { target: "./src/workflows", from: [...above("pipeline", "s2s", "transport", "turn", "providers", "audio"), ...upperTier], message: "workflows imports only manifest, errors, log, clock and events" },
  { target: above("pipeline", "s2s", "transport", "turn"), from: "./src/workflows", message: "the voice path never imports workflows: the session hands runs to it" },
  // The session sits under the server.
  { target: "./src/session", from: above("server", "cli.ts", "index.ts", "testing"), message: "session never imports the server, the CLI or the public barrel" },
];

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**", "examples/**/public/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "import-x": importX },
    settings: {
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "./tsconfig.json" })],
    },
    rules: {
      "import-x/no-restricted-paths": ["error", { zones }],
      "import-x/no-cycle": "off",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": ["error", { allow: ["warn", "error"] }],
    },
  },
  {
    // On Node 20 a literal that starts with a spread and adds to it gets a hidden class of its own
    // per object once optimized (src/spread.ts, bench:object-spread).
    files: ["src/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "ObjectExpression[properties.0.type='SpreadElement'][properties.length>1]",
          message: "`{ ...a, b }` gets a hidden class of its own per object on Node 20: spread(a, { b }) (src/spread.ts), or start the literal with a property",
        },
      ],
    },
  },
  {
    // Tests, benches and the loopback vendor fakes both use (fakes/).
    files: ["test/**", "bench/**", "fakes/**"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "no-console": "off",
    },
  },
  {
    files: ["eslint.config.js"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The demo page (public/): plain browser ES modules, outside the TS project.
    files: ["public/**/*.js"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: "module",
      globals: Object.fromEntries(
        [
          ...["window", "document", "location", "navigator", "console", "fetch", "URL", "URLSearchParams", "WebSocket", "DataView"],
          ...["setTimeout", "clearTimeout", "setInterval", "clearInterval", "AudioContext", "AudioWorkletNode"],
          // AudioWorkletGlobalScope (mic-worklet.js)
          ...["AudioWorkletProcessor", "registerProcessor", "sampleRate", "currentTime"],
        ].map((name) => [name, "readonly"]),
      ),
    },
  },
);
