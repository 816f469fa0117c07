// Unit specs live beside the code; integration and end-to-end suites live in test/.
// ts-jest in isolated mode only transpiles (the build's tsc run type-checks), which keeps runs fast.
const moduleNameMapper = {
  '^@app/([a-z-]+)(|/.*)$': '<rootDir>/libs/$1/src$2',
};
const transform = { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }] };
// One fast-check seed per jest run, printed at its start (test/support/seed-reporter.js) and used
// by every property (test/support/fast-check-seed.js); FC_SEED=<seed> replays a run.
process.env.FC_SEED ??= String(Math.floor(Math.random() * 2 ** 31) * (Math.random() < 0.5 ? -1 : 1));
const setupFiles = ['<rootDir>/test/support/fast-check-seed.js'];
// Where the suites running now are listed (test/support/active-suites-reporter.js).
process.env.TEST_ACTIVE_DIR ??= require('node:path').join(require('node:os').tmpdir(), `gateway-active-suites-${process.pid}`);
module.exports = {
  // The canary scan must see what every other suite wrote, so it runs last.
  testSequencer: '<rootDir>/test/sequencer.js',
  reporters: ['default', '<rootDir>/test/support/seed-reporter.js', '<rootDir>/test/support/active-suites-reporter.js'],
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/bench', '<rootDir>/scripts/chaos'],
      modulePathIgnorePatterns: ['<rootDir>/bench/\\.logs/'],
      testMatch: ['**/*.spec.ts'],
      moduleNameMapper,
      transform,
      setupFiles,
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      moduleNameMapper,
      transform,
      setupFiles: [...setupFiles, '<rootDir>/test/support/worker-env.js'],
      setupFilesAfterEnv: ['<rootDir>/test/support/suite-start.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
