// Layer and ownership rules of the libs/ layout (README, "Layout"). Paths are repository-relative;
// `$1` in a `to` path is the first group matched by the rule's `from` path.

// Packages and core modules that do I/O: a pure lib imports none of them.
const IO_MODULES = [
  '(^|/)node_modules/(pg|typeorm|ioredis|bullmq)/',
  '(^|/)node_modules/@nestjs/microservices/',
  '^(node:)?dns(/promises)?$',
  '^libs/(persistence|messaging)/',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-app-to-app',
      comment: 'An app never imports another app: what two apps share lives in a lib.',
      severity: 'error',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'no-lib-to-app',
      comment: 'Libs never import apps.',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'pure-libs-no-io',
      comment:
        'card, split, contracts, the webhook rules (all of libs/webhooks/src but delivery) and the vault ciphers are pure: ' +
        'no database, queue, Redis or DNS, directly or through persistence or messaging.',
      severity: 'error',
      from: {
        path: ['^libs/(card|split|contracts)/', '^libs/webhooks/src/', '^libs/vault/src/(keyring|transit|records|secrets)(/|\\.ts$)'],
        pathNot: '^libs/webhooks/src/delivery(/|\\.ts$)',
      },
      to: { path: IO_MODULES },
    },
    {
      name: 'vault-records-owners',
      comment: 'Card record encryption is for the tokenizer, the CLI and the vault store only.',
      severity: 'error',
      from: { pathNot: '^(apps/tokenizer|apps/cli|libs/vault-store|libs/vault)/' },
      to: { path: '^libs/vault/src/records(/|\\.ts$)' },
    },
    {
      name: 'no-vault-barrel',
      comment: 'The vault has one entry point per use (keyring, transit, records, secrets) and no barrel.',
      severity: 'error',
      from: {},
      to: { path: '^libs/vault/src/index\\.ts$' },
    },
    {
      name: 'persistence-no-engines',
      comment: 'Persistence is SQL: no split, settlement or acquirer engine, and of card only the Luhn check.',
      severity: 'error',
      from: { path: '^libs/persistence/' },
      to: { path: ['^libs/(split|settlement|acquirer)/', '^libs/card/'], pathNot: '^libs/card/src/luhn\\.ts$' },
    },
    {
      name: 'platform-is-a-leaf',
      comment: 'Platform imports npm packages and, of the libs, only the Luhn check (for the log censor).',
      severity: 'error',
      from: { path: '^libs/platform/' },
      to: { path: '^(libs|apps)/', pathNot: ['^libs/platform/', '^libs/card/src/luhn\\.ts$'] },
    },
    {
      name: 'messaging-imports-platform-and-contracts',
      comment: 'The BullMQ transport builds on platform and contracts only.',
      severity: 'error',
      from: { path: '^libs/messaging/' },
      to: { path: '^(libs|apps)/', pathNot: '^libs/(messaging|platform|contracts)/' },
    },
    {
      name: 'settlement-lib-owners',
      comment: 'Settlement use-cases are called by the settlement worker and the CLI only.',
      severity: 'error',
      from: { pathNot: '^(apps/settlement|apps/cli|libs/settlement)/' },
      to: { path: '^libs/settlement/' },
    },
    {
      name: 'vault-store-owners',
      comment: 'The token-card SQL is used by the tokenizer and the CLI only.',
      severity: 'error',
      from: { pathNot: '^(apps/tokenizer|apps/cli|libs/vault-store)/' },
      to: { path: '^libs/vault-store/' },
    },
    {
      name: 'no-circular',
      comment: 'No file imports itself through others.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-circular-folders',
      comment: 'No folder depends on itself through other folders.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves (a moved file left a stale path).',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|coverage|node_modules)/' },
    // Type-only imports count: the layers are about what code knows, not only what it loads.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['require', 'node', 'default'], mainFields: ['main', 'types'] },
  },
};
