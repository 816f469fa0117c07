// Layer and ownership rules of the libs/ layout (README, "Tests": npm run lint). Paths are
// repository-relative; `$1` in a `to` path is the first group matched by the rule's `from` path.

// Packages and core modules that do I/O: a pure lib imports none of them.
const IO_MODULES = [
  '(^|/)node_modules/(@types/)?(pg|typeorm|ioredis|bullmq)/',
  '(^|/)node_modules/@nestjs/microservices/',
  '^(node:)?dns(/promises)?$',
  '^libs/(persistence|messaging)/',
];

/** A forbidden dependency; every rule here is an error. */
const forbid = (name, comment, from, to, extra = {}) => ({ name, comment, severity: 'error', from, to, ...extra });

/** `target` (a path pattern) may be imported only from inside itself and by `owners` (top folders such as apps/cli). */
const ownedBy = (name, comment, target, owners) => forbid(name, comment, { pathNot: `^(${owners.join('|')})/` }, { path: target });

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    forbid(
      'no-app-to-app',
      'An app never imports another app: what two apps share lives in a lib.',
      { path: '^apps/([^/]+)/' },
      { path: '^apps/', pathNot: '^apps/$1/' },
    ),
    forbid('no-lib-to-app', 'Libs never import apps.', { path: '^libs/' }, { path: '^apps/' }),
    forbid(
      'pure-libs-no-io',
      'card, split, contracts, the webhook rules (all of libs/webhooks/src but delivery) and the vault ciphers are pure: ' +
        'no database, queue, Redis or DNS, directly or through persistence or messaging.',
      {
        path: ['^libs/(card|split|contracts)/', '^libs/webhooks/src/', '^libs/vault/src/(keyring|transit|records|secrets)(/|\\.ts$)'],
        pathNot: '^libs/webhooks/src/delivery(/|\\.ts$)',
      },
      { path: IO_MODULES },
    ),
    ownedBy(
      'vault-records-owners',
      'Card record encryption is for the tokenizer, the CLI and the vault store only.',
      '^libs/vault/src/records(/|\\.ts$)',
      ['apps/tokenizer', 'apps/cli', 'libs/vault-store', 'libs/vault'],
    ),
    forbid(
      'no-vault-barrel',
      'The vault has one entry point per use (keyring, transit, records, secrets) and no barrel.',
      {},
      { path: '^libs/vault/src/index\\.ts$' },
    ),
    forbid(
      'persistence-no-engines',
      'Persistence is SQL: no split, settlement or acquirer engine, and of card only the Luhn check.',
      { path: '^libs/persistence/' },
      { path: ['^libs/(split|settlement|acquirer)/', '^libs/card/'], pathNot: '^libs/card/src/luhn\\.ts$' },
    ),
    forbid(
      'platform-is-a-leaf',
      'Platform imports npm packages and, of the libs, only the Luhn check (for the log censor).',
      { path: '^libs/platform/' },
      { path: '^(libs|apps)/', pathNot: ['^libs/platform/', '^libs/card/src/luhn\\.ts$'] },
    ),
    forbid(
      'messaging-imports-platform-and-contracts',
      'The BullMQ transport builds on platform and contracts only.',
      { path: '^libs/messaging/' },
      { path: '^(libs|apps)/', pathNot: '^libs/(messaging|platform|contracts)/' },
    ),
    ownedBy('settlement-lib-owners', 'Settlement use-cases are called by the settlement worker and the CLI only.', '^libs/settlement/', [
      'apps/settlement',
      'apps/cli',
      'libs/settlement',
    ]),
    ownedBy('vault-store-owners', 'The token-card SQL is used by the tokenizer and the CLI only.', '^libs/vault-store/', [
      'apps/tokenizer',
      'apps/cli',
      'libs/vault-store',
    ]),
    forbid('no-circular', 'No file imports itself through others.', {}, { circular: true }),
    forbid('no-circular-folders', 'No folder depends on itself through other folders.', {}, { circular: true }, { scope: 'folder' }),
    forbid('not-to-unresolvable', 'Every import resolves (a moved file left a stale path).', {}, { couldNotResolve: true }),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // node_modules stays in the graph (the pure-lib rule looks at which packages are imported) but is not followed.
    exclude: { path: '^(dist|coverage)/' },
    // Type-only imports count: the layers are about what code knows, not only what it loads.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['require', 'node', 'default'], mainFields: ['main', 'types'] },
  },
};
