// Layering of src/ (DESIGN 2): imports point inward, transport → service → domain modules → schemas. Each folder
// lists the folders it may import; the lists form a DAG, so no two folders can import each other, and
// `no-circular` forbids a cycle between files. `npm run check:deps` runs this; .ci/run fails on any violation.

/** Folder → the folders of src/ it may import (besides itself). */
const MAY_IMPORT = {
  schemas: [],
  engine: ['schemas'],
  contracts: [],
  auth: ['schemas'],
  compliance: ['schemas'],
  store: ['schemas'],
  catalogue: ['engine', 'schemas'],
  tx: ['contracts', 'engine', 'schemas'],
  market: ['engine', 'schemas'],
  payments: ['store', 'schemas'],
  intel: ['store', 'engine', 'schemas'],
  lifecycle: ['intel', 'payments', 'market', 'tx', 'store', 'contracts', 'engine', 'schemas'],
  service: ['lifecycle', 'intel', 'payments', 'market', 'tx', 'store', 'catalogue', 'compliance', 'auth', 'contracts', 'engine', 'schemas'],
  http: ['service', 'payments', 'auth', 'engine', 'schemas'],
  mcp: ['payments', 'store', 'engine', 'schemas'],
}

const layerRules = Object.entries(MAY_IMPORT).map(([folder, allowed]) => ({
  name: `layer-${folder}`,
  comment: `src/${folder}/ may import only ${allowed.length === 0 ? 'itself' : `itself and ${allowed.join(', ')}`} (DESIGN 2)`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: '^src/', pathNot: `^src/(${[folder, ...allowed].join('|')})/` },
}))

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle between files of src/.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'config-from-root-only',
      comment: 'config.ts reads process.env; only the composition root (app/) and the CLI read configuration.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(app/|cli/|config\\.ts$)' },
      to: { path: '^src/config\\.ts$' },
    },
    {
      name: 'app-not-from-inside',
      comment: 'The composition root is imported by the CLI only.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(app|cli)/' },
      to: { path: '^src/(app|cli)/' },
    },
    {
      name: 'cli-is-outermost',
      comment: 'Nothing imports the CLI.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'no-unknown-folder',
      comment: 'A new folder of src/ takes a place in the layering above before it lands.',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(${[...Object.keys(MAY_IMPORT), 'app', 'cli'].join('|')})/|^src/config\\.ts$` },
      to: {},
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|test|bench|scripts)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
}
