/**
 * shared/'s capabilities, lowest first: each may use those of the tiers below it, and none of its
 * own tier or above; shared/platform/ is under them all. The Lua scripts' includes are held to the
 * same rules (test/house/layers.test.ts reads them as imports; dependency-cruiser reads no Lua).
 */
const CAPABILITY_TIERS = [
  // Engines that know no capability: the reservation pipeline, the locked cache, the rates.
  ['reservations', 'cache', 'limits'],
  ['coupons', 'mail', 'catalog', 'sessions'],
  // The sale (orders, its waiting room and the kinds of sale the pipeline carries) and the HTTP API's stack.
  ['sale', 'api'],
];

const capabilitiesInOrder = CAPABILITY_TIERS.map((tier, i) => ({
  name: `capabilities-in-order-${i + 1}`,
  comment: `${tier.join(', ')} may use ${i === 0 ? 'shared/platform/ alone' : CAPABILITY_TIERS.slice(0, i).flat().join(', ')} of shared/'s capabilities, none of their own tier or above.`,
  severity: 'error',
  from: { path: `^shared/(${tier.join('|')})/` },
  to: { path: `^shared/(${CAPABILITY_TIERS.slice(i).flat().join('|')})/`, pathNot: '^shared/$1/' },
}));

/**
 * The house's layers (docs/architecture.md): functions/ → shared/; shared/'s capabilities → its
 * platform; infra/ (stack, twin, operators' tools) and load/ beside them, test/ above all. Checked
 * in `npm test` by test/house/layers.test.ts, which also plants a violation of each rule.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'A file may not reach itself through its imports: a cycle is one module in several files.',
      severity: 'error',
      from: { path: '^(shared|functions|infra|load)/' },
      to: { circular: true, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-folder-cycle-in-shared',
      comment: "Two folders of shared/ may not import each other, however indirectly: one of them belongs inside the other's or below both.",
      severity: 'error',
      scope: 'folder',
      from: { path: '^shared/' },
      to: { circular: true },
    },
    {
      name: 'shared-stands-alone',
      comment: 'shared/ is what the functions, the twin and the benches stand on: it imports nothing above it.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(functions|infra|load|test)/' },
    },
    {
      name: 'platform-below-capabilities',
      comment: 'shared/platform/ (clients, http, redis, db, queue, config, errors, …) serves every capability and knows none.',
      severity: 'error',
      from: { path: '^shared/platform/' },
      to: { path: '^shared/', pathNot: '^shared/platform/' },
    },
    ...capabilitiesInOrder,
    {
      name: 'orders-know-no-room',
      comment: "A sale's orders take a waiting room's pass without knowing the room: the room stands on the orders, never the other way.",
      severity: 'error',
      from: { path: '^shared/sale/orders/' },
      to: { path: '^shared/sale/(rooms/|kinds\\.ts$)' },
    },
    {
      name: 'no-test-below-test',
      comment: 'load/ and infra/ ship or run without the tests: they import nothing of test/.',
      severity: 'error',
      from: { path: '^(load|infra)/' },
      to: { path: '^test/' },
    },
    {
      name: 'infra-not-load',
      comment: 'The stack, the twin and the operators’ tools import nothing of load/: the benches hand the twin their baselines.',
      severity: 'error',
      from: { path: '^infra/' },
      to: { path: '^load/' },
    },
    {
      name: 'entry-files-import-shared',
      comment:
        'An entry file of functions/ imports shared/ and, where it describes the table itself, functions/table.ts; never another entry file, infra/, load/ or test/.',
      severity: 'error',
      from: { path: '^functions/[^/]+\\.ts$', pathNot: '^functions/table\\.ts$' },
      to: { path: '^(functions/|infra/|load/|test/)', pathNot: '^functions/table\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|\\.local|cdk\\.out)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.cjs', '.js', '.d.ts'] },
  },
};
