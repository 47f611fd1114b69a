/** @type {import('jest').Config} */
const libs = "errors|request-settings|access|proto|grpc-kit|config|logging|money|http-kit|db|tracing|bus|loading-cache|testkit|sealing|outbound|content-filter|management-api|random-tokens|api-keys|chat-request|providers|inference-api";
const services = "gateway|console|routing|ledger|activity|reports|alerts|broadcast|runaway";
module.exports = {
  testEnvironment: "node",
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "commonjs" } },
    ],
  },
  // Tests run against sources; end-to-end tests start the built services (dist) as processes.
  moduleNameMapper: {
    [`^@router/(${libs})$`]: "<rootDir>/libs/$1/src/index.ts",
    [`^@router/(${services})$`]: "<rootDir>/services/$1/src/app.ts",
    [`^@router/(${services})/(.*)$`]: "<rootDir>/services/$1/src/$2",
  },
  testMatch: ["<rootDir>/{libs,services}/*/test/**/*.test.ts", "<rootDir>/e2e/**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/dist/"],
  testTimeout: 30000,
  // On a two-core machine jest runs every file in one process: a handle some test leaks (a child
  // process, a socket) would keep it alive after a green run until CI's time limit. Exit when the
  // run is over; `npm run test:handles` lists what was left open.
  forceExit: true,
  // CI's log names each file as it starts (scripts/test-timeline-reporter.js).
  reporters: process.env.ROUTER_TEST_TIMELINE === "1" ? ["default", "<rootDir>/scripts/test-timeline-reporter.js"] : ["default"],
};
