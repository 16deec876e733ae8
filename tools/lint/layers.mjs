// The layers of a service (docs/development.md, "Layers"), enforced by lint:
//
//   rpc/ ──▶ app/ ──▶ domain/        compose.ts wires every layer (the only place that may)
//   events/ ─┘  │  ▲
//   clients/ ───┼──┘ (implement app/ports.ts)
//               ▼
//             store/ ──▶ domain/
//
// domain/ is pure; app/ orchestrates through its ports and never runs SQL itself; store/ owns the SQL;
// rpc/ only translates gRPC (it opens no client: outbound calls live in clients/).
const TRANSPORT = ['@grpc/*', '@sluice/rpc', '@sluice/contracts', 'fastify', 'fastify/*', '@fastify/*', '@nats-io/*'];
const PERSISTENCE = ['@mikro-orm/*', '@sluice/store', 'pg', 'pg/*', 'pg-*'];

function layer(name, { folders, packages, typesOnly = [], paths = [], syntax = [], message }) {
  return {
    name: `sluice/layers/${name}`,
    files: [`apps/*/src/${name}/**/*.ts`],
    ignores: ['**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: paths.map((p) => ({ ...p, message })),
          patterns: [
            { group: folders.flatMap((f) => [`**/${f}/**`, `../${f}/*`, `../../${f}/*`]), message },
            ...(packages.length ? [{ group: packages, message }] : []),
            // Types only (the transaction handle an outbox write or a consumer runs in).
            ...(typesOnly.length ? [{ group: typesOnly, message, allowTypeImports: true }] : []),
          ],
        },
      ],
      ...(syntax.length ? { 'no-restricted-syntax': ['error', ...syntax.map((selector) => ({ selector, message }))] } : {}),
    },
  };
}

export const layers = [
  layer('domain', {
    folders: ['app', 'store', 'rpc', 'clients', 'events'],
    packages: [...TRANSPORT, ...PERSISTENCE, '@sluice/events', '@sluice/runtime'],
    message: 'domain/ holds pure rules: no other layer, no transport, persistence or messaging (docs/development.md, Layers).',
  }),
  layer('app', {
    folders: ['rpc', 'clients', 'events'],
    packages: TRANSPORT,
    // SQL belongs to store/: an app service asks a repository.
    syntax: ["CallExpression[callee.property.name='execute']"],
    message:
      'app/ orchestrates through its ports (app/ports.ts) and repositories (store/); adapters (rpc/, clients/, events/) are wired by compose.ts, SQL lives in store/ (docs/development.md, Layers).',
  }),
  layer('store', {
    folders: ['app', 'rpc', 'clients', 'events'],
    packages: TRANSPORT,
    message: 'store/ owns SQL and maps rows to the domain; it knows no use case and no transport (docs/development.md, Layers).',
  }),
  layer('rpc', {
    folders: ['store', 'clients'],
    packages: PERSISTENCE,
    paths: [{ name: '@sluice/rpc', importNames: ['createRpcClient'] }],
    message:
      'rpc/ translates gRPC to and from the app layer: storage only through app/, other services only through clients/ (docs/development.md, Layers).',
  }),
  layer('events', {
    folders: ['store', 'clients'],
    packages: PERSISTENCE.filter((p) => p !== '@sluice/store'),
    typesOnly: ['@sluice/store'],
    message:
      'events/ publish through the outbox and hand consumed events to app/; storage only through app/ (docs/development.md, Layers).',
  }),
  layer('clients', {
    folders: ['store', 'rpc', 'events'],
    packages: PERSISTENCE,
    message: 'clients/ implement the app ports over other services: no storage, no handlers (docs/development.md, Layers).',
  }),
];
