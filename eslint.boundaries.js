// Which folder may import which: the architecture of docs in README "Design notes", enforced.
// A service reaches another service only through that service's published `index.ts`; `core` is a library every
// service may use file by file and that imports no service; only the entry points (`app/`, `cli/`, `bin/`) assemble
// services. Tests may also use `test/support`.
import boundaries from 'eslint-plugin-boundaries';

/** Each service and the services it may use (through their index.ts). */
export const SERVICE_USES = {
  core: [],
  grpc: [],
  documents: ['grpc'],
  osv: ['grpc'],
  admin: [],
  console: [],
  member: ['admin'],
  devforge: [],
  mcp: ['devforge'],
};

const services = Object.keys(SERVICE_USES).filter((name) => name !== 'core');

export const boundariesConfig = {
  files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
  plugins: { boundaries },
  settings: {
    'boundaries/include': ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    'boundaries/ignore': ['src/grpc/generated/**'],
    'boundaries/elements': [
      { type: 'core', pattern: 'src/core' },
      ...services.map((name) => ({ type: name, pattern: `src/${name}` })),
      { type: 'app', pattern: 'src/app' },
      { type: 'cli', pattern: 'src/cli' },
      { type: 'test-support', pattern: 'test' },
      { type: 'bench', pattern: 'bench' },
    ],
    // Requirement lists are read only by tests (STYLE.md 12), so they are test files too.
    'boundaries/files': [
      {
        category: 'test',
        pattern: ['**/*.test.ts', '**/*.testkit.ts', '**/*.test-support.ts', '**/requirements.ts', '**/*.requirements.ts', 'test/**'],
      },
    ],
  },
  rules: {
    'boundaries/dependencies': [
      'error',
      {
        default: 'disallow',
        message: 'this import crosses a service boundary (see SERVICE_USES in eslint.boundaries.js and the README design notes)',
        policies: [
          { from: { element: { types: ['app', 'cli', 'bench', 'test-support'] } }, allow: { to: { element: { types: ['*'] } } } },
          { from: { element: { types: ['*'] } }, allow: { to: { element: { type: 'core' } } } },
          ...services.map((name) => ({
            from: { element: { type: name } },
            allow: { to: { element: { types: SERVICE_USES[name], fileInternalPath: 'index.ts' } } },
          })),
          // Tests beside the code may use the test support tree, the services they drive and the composition root
          // that starts them, as the entry points do.
          { from: { file: { categories: 'test' } }, allow: { to: { element: { types: ['test-support', 'app', 'cli', ...services] } } } },
        ],
      },
    ],
  },
};
