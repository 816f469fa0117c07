// Unit specs live beside the code; integration and end-to-end suites live in test/.
// ts-jest in isolated mode only transpiles (the build's tsc run type-checks), which keeps runs fast.
const moduleNameMapper = {
  '^@app/([a-z-]+)(|/.*)$': '<rootDir>/libs/$1/src$2',
};
const transform = { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }] };
module.exports = {
  // The canary scan must see what every other suite wrote, so it runs last.
  testSequencer: '<rootDir>/test/sequencer.js',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/bench'],
      modulePathIgnorePatterns: ['<rootDir>/bench/\\.logs/'],
      testMatch: ['**/*.spec.ts'],
      moduleNameMapper,
      transform,
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      moduleNameMapper,
      transform,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
