// Layer and ownership rules of the libs/ layout (docs/testing.md: npm run lint). Paths are
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
      'card, split, contracts, the webhook rules (all of libs/webhooks/src but delivery), the vault ciphers and the rebill schedule are pure: ' +
        'no database, queue, Redis or DNS, directly or through persistence or messaging.',
      {
        path: [
          '^libs/(card|split|contracts)/',
          '^libs/webhooks/src/',
          '^libs/vault/src/(keyring|transit|records|secrets)(/|\\.ts$)',
          '^libs/rebills/src/schedule\\.ts$',
        ],
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
    ownedBy(
      'rebills-lib-owners',
      'The rebill rules (schedule, runner, state changes) are called by the apps that make or charge rebills only: api, tokenizer, CLI and console.',
      '^libs/rebills/',
      ['apps/api', 'apps/tokenizer', 'apps/cli', 'apps/console', 'libs/rebills'],
    ),
    forbid('rebills-lib-no-app', 'The rebill rules know no app: each app calls them.', { path: '^libs/rebills/' }, { path: '^apps/' }),
    ownedBy('vault-store-owners', 'The token-card SQL is used by the tokenizer and the CLI only.', '^libs/vault-store/', [
      'apps/tokenizer',
      'apps/cli',
      'libs/vault-store',
    ]),
    ownedBy(
      'http-edge-owners',
      "The HTTP edge (libs/http) is the two web apps' own: the api (/v1) and the console (/console, /portal, /admin).",
      '^libs/http/',
      ['apps/api', 'apps/console', 'libs/http'],
    ),
    forbid(
      'persistence-imports-contracts-and-platform',
      'Persistence is migrations, grants and repositories: of the libs it imports contracts and platform only (so never a domain ' +
        "lib such as operators, outbox or retention, which call it). Named exceptions: the Luhn check, a merchant public id's " +
        'check digit (merchant-public-id.ts); the vault keyring and secrets, because the sealed columns (webhook secrets, ' +
        'acquirer credentials) are sealed as they are written and opened as they are read, and a shipped migration sealed them.',
      { path: '^libs/persistence/' },
      {
        path: '^(libs|apps)/',
        pathNot: ['^libs/(persistence|contracts|platform)/', '^libs/card/src/luhn\\.ts$', '^libs/vault/src/(keyring|secrets)(/|\\.ts$)'],
      },
    ),
    ownedBy(
      'operators-lib-owners',
      'Operator roles, access and the audit trail are for the apps that act for operators (admin, cli, console), the ones that ' +
        'record an action (notifier: a listener disabled; api: refused authentications) and the web edge that records those ' +
        'refusals (libs/http, used by the api and the console). Being a lib, it imports no app (no-lib-to-app).',
      '^libs/operators/',
      ['apps/admin', 'apps/api', 'apps/cli', 'apps/console', 'apps/notifier', 'libs/http', 'libs/operators'],
    ),
    ownedBy(
      'outbox-lib-owners',
      'The outbox relay is run by the tokenizer alone. It is a lib of its own rather than part of libs/messaging because it reads ' +
        'and marks outbox rows (through the persistence repository it is given) and messaging imports only platform and contracts; ' +
        'it builds on both. Being a lib, it imports no app (no-lib-to-app).',
      '^libs/outbox/',
      ['apps/tokenizer', 'libs/outbox'],
    ),
    ownedBy(
      'retention-lib-owners',
      'The retention policy (which app prunes which table, and at what age) is run by the CLI (retention:run) and by each owning ' +
        "app's pass, which libs/boot wires for the app that names it. Being a lib, it imports no app (no-lib-to-app).",
      '^libs/retention/',
      ['apps/cli', 'libs/boot', 'libs/retention'],
    ),
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
