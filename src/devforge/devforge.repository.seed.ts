/**
 * Demo repositories and CI history for the sample projects (issue 18 item 4), so a newcomer can browse files,
 * history, branches, tags, pipelines and job logs at once:
 *
 * - `<user>/hello-forge`: a small TypeScript app with history on `main` (a merge of `import`), the branch
 *   `readme` ahead of `main`, tags `v0.1.0` (lightweight) and `v1.0.0` (annotated), `main` protected, a binary
 *   logo, a 2,500-line word list and 25 guide pages (for line windows and tree paging); three pipelines: passed,
 *   failed (a test job with a 1,500-line log and a failing assertion) and running;
 * - `<user>/handbook` and `forge-samples/public-tools`: a few Markdown files, one commit each.
 *
 * Repositories are not part of the saved state file: they are rebuilt from this seed on every start.
 */
import { lintCiConfig, createPipeline, currentJobs, type CiStatus, type DevForgeCi } from './devforge.ci.ts';
import { addCommit, type CommitRecord, type DevForgeRepositories, type RepoFile, type RepositoryRecord } from './devforge.repository.ts';
import type { DevForgeStore } from './devforge.store.ts';
import type { ProjectRecord } from './devforge.types.ts';

const text = (s: string): RepoFile => ({ content: Buffer.from(s, 'utf8'), executable: false });

/** A 1×1 PNG (binary content for the "binary file" paths). */
const LOGO = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const CI_CONFIG = `stages:
  - build
  - test
  - deploy

build:
  stage: build
  script:
    - npm ci
    - npm run build

test:
  stage: test
  script:
    - npm test

lint:
  stage: test
  script:
    - npm run lint
  allow_failure: true

deploy:
  stage: deploy
  script:
    - ./scripts/deploy.sh
  when: manual
`;

const WORDS = Array.from({ length: 2500 }, (_, i) => `word-${String(i + 1).padStart(4, '0')}`).join('\n') + '\n';

/** A job log in GitLab's format: section markers and ANSI colours around the commands. */
function jobLog(name: string, lines: string[], ok: boolean): string {
  const t = 1_735_689_600;
  const out = [
    `\u001b[0KRunning with gitlab-runner 17.11.0 (devforge)\u001b[0;m`,
    `\u001b[0K  on devforge-runner abc123, system ID: s_devforge\u001b[0;m`,
    `section_start:${t}:prepare_script\r\u001b[0K\u001b[0K\u001b[36;1mPreparing environment\u001b[0;m`,
    'Running on runner-abc123 via devforge...',
    `section_end:${t + 1}:prepare_script\r\u001b[0K`,
    `section_start:${t + 2}:step_script\r\u001b[0K\u001b[0K\u001b[36;1mExecuting "step_script" stage of the job script\u001b[0;m`,
    ...lines,
    `section_end:${t + 40}:step_script\r\u001b[0K`,
    ok ? '\u001b[32;1mJob succeeded\u001b[0;m' : `\u001b[31;1mERROR: Job failed: exit code 1\u001b[0;m`,
  ];
  return `${out.join('\n')}\n`;
}

function testLog(failing: boolean): string {
  const lines = ['\u001b[32;1m$ npm test\u001b[0;m', '> hello-forge@1.0.0 test', '> node --test'];
  for (let i = 1; i <= 1500; i += 1) lines.push(`ok ${i} - greets case ${i} (${(i % 7) + 1}ms)`);
  if (failing)
    lines.splice(
      900,
      0,
      'not ok 898 - greets with punctuation',
      '  ---',
      '  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
      '  + actual - expected',
      "  + 'Hello, world'",
      "  - 'Hello, world!'",
      '      at TestContext.<anonymous> (src/greet.test.ts:12:10)',
      '  ...',
    );
  lines.push(failing ? '# tests 1501\n# pass 1500\n# fail 1' : '# tests 1500\n# pass 1500\n# fail 0');
  return jobLog('test', lines, !failing);
}

function seedHelloForge(repo: RepositoryRecord, owner: { name: string; email: string }, now: number): Record<string, CommitRecord> {
  const day = 86_400_000;
  const at = (daysAgo: number) => now - daysAgo * day;
  const guides = Array.from(
    { length: 25 },
    (_, i) => [`docs/guide-${String(i + 1).padStart(2, '0')}.md`, text(`# Guide ${i + 1}\n\nStep ${i + 1} of the tour.\n`)] as const,
  );
  const c1 = addCommit(repo, {
    parentIds: [],
    message: 'Initial commit\n\nA small greeting app with its CI.',
    author: owner,
    at: at(30),
    files: new Map<string, RepoFile>([
      ['README.md', text('# hello-forge\n\nA sample project of the dev forge.\n')],
      ['package.json', text('{\n  "name": "hello-forge",\n  "version": "1.0.0",\n  "scripts": { "test": "node --test" }\n}\n')],
      ['src/app.ts', text("import { argv } from 'node:process';\n\nconsole.log('Hello, ' + (argv[2] ?? 'world'));\n")],
      ['.gitlab-ci.yml', text(CI_CONFIG)],
      ['assets/logo.png', { content: LOGO, executable: false }],
      ['data/words.txt', text(WORDS)],
      ...guides,
    ]),
  });
  const c2 = addCommit(repo, {
    parentIds: [c1.id],
    message: 'Add a greeting module',
    author: owner,
    at: at(20),
    files: new Map([
      ...c1.files,
      ['src/greet.ts', text("export function greet(name: string): string {\n  return 'Hello, ' + name;\n}\n")],
      [
        'src/app.ts',
        text("import { argv } from 'node:process';\nimport { greet } from './greet.ts';\n\nconsole.log(greet(argv[2] ?? 'world'));\n"),
      ],
    ]),
  });
  const c3 = addCommit(repo, {
    parentIds: [c2.id],
    message: 'Import the legacy deploy script',
    author: owner,
    at: at(15),
    files: new Map([
      ...c2.files,
      ['scripts/deploy.sh', { content: Buffer.from('#!/bin/sh\nset -eu\necho "deploying"\n'), executable: true }],
    ]),
  });
  const c4 = addCommit(repo, {
    parentIds: [c2.id],
    message: 'Fix the greeting punctuation',
    author: owner,
    at: at(10),
    files: new Map([
      ...c2.files,
      ['src/greet.ts', text('export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n')],
    ]),
  });
  const c5 = addCommit(repo, {
    parentIds: [c4.id, c3.id],
    message: "Merge branch 'import' into 'main'\n\nInitial import\n\nSee merge request !2",
    author: owner,
    at: at(5),
    files: new Map([...c4.files, ['scripts/deploy.sh', c3.files.get('scripts/deploy.sh') as RepoFile]]),
  });
  const c6 = addCommit(repo, {
    parentIds: [c5.id],
    message: 'Expand the README',
    author: owner,
    at: at(2),
    files: new Map([
      ...c5.files,
      ['README.md', text('# hello-forge\n\nA sample project of the dev forge.\n\n## Running\n\n    npm test\n    node src/app.ts you\n')],
    ]),
  });
  repo.branches.set('main', c5.id);
  repo.branches.set('import', c3.id);
  repo.branches.set('readme', c6.id);
  repo.tags.set('v0.1.0', { name: 'v0.1.0', target: c2.id, message: '', createdAt: at(20) });
  repo.tags.set('v1.0.0', { name: 'v1.0.0', target: c5.id, message: 'First release', createdAt: at(5) });
  repo.protectedBranches.set('main', {
    id: repo.projectId * 100 + 1,
    name: 'main',
    pushAccessLevel: 40,
    mergeAccessLevel: 40,
    allowForcePush: false,
  });
  return { c1, c2, c3, c4, c5, c6 };
}

function seedDocs(repo: RepositoryRecord, owner: { name: string; email: string }, now: number, files: [string, string][]): void {
  const c = addCommit(repo, {
    parentIds: [],
    message: 'Start the notes',
    author: owner,
    at: now - 7 * 86_400_000,
    files: new Map(files.map(([p, t]) => [p, text(t)])),
  });
  repo.branches.set('main', c.id);
}

/** A pipeline of the seed with its jobs set to the given states and logs. */
function seedPipeline(
  ci: DevForgeCi,
  project: ProjectRecord,
  userId: number,
  commit: CommitRecord,
  ref: string,
  at: number,
  jobs: Record<string, { status: CiStatus; log?: string; failure?: string }>,
): void {
  const pipeline = createPipeline(ci, {
    projectId: project.id,
    ref,
    tag: false,
    sha: commit.id,
    beforeSha: commit.parentIds[0] ?? '0000000000000000000000000000000000000000',
    userId,
    source: 'push',
    at,
    variables: [],
    config: lintCiConfig(CI_CONFIG),
  });
  let t = at + 5_000;
  for (const job of currentJobs(ci, pipeline)) {
    const state = jobs[job.name];
    if (!state) continue;
    job.status = state.status;
    if (state.status !== 'created' && state.status !== 'pending' && state.status !== 'manual' && state.status !== 'skipped') {
      job.startedAt = t;
      t += 30_000;
      if (state.status !== 'running') job.finishedAt = t;
    }
    job.log = state.log ?? '';
    job.failureReason = state.failure ?? null;
  }
  const finished = currentJobs(ci, pipeline).every((j) => j.finishedAt !== null || j.status === 'manual' || j.status === 'skipped');
  pipeline.updatedAt = t;
  pipeline.finishedAt = finished ? t : null;
}

/** Seeds every sample project's repository and the CI history of `hello-forge`. */
export function seedRepositories(store: DevForgeStore, repositories: DevForgeRepositories, ci: DevForgeCi, now: number): void {
  for (const project of store.projects.values()) {
    const owner = store.users.get(project.creatorId);
    if (!owner) continue;
    const who = { name: owner.name, email: owner.email };
    const repo = repositories.of(project.id);
    if (repo.commits.size > 0) continue;
    if (project.path === 'hello-forge') {
      const c = seedHelloForge(repo, who, now);
      const build = (ok: boolean) =>
        jobLog(
          'build',
          ['\u001b[32;1m$ npm ci\u001b[0;m', 'added 42 packages in 2s', '$ npm run build', ok ? 'built in 1.2s' : 'error TS2304'],
          ok,
        );
      const lint = jobLog('lint', ['$ npm run lint', 'src/app.ts: 1 warning (no-console)'], true);
      seedPipeline(ci, project, owner.id, c.c4 as CommitRecord, 'main', now - 10 * 86_400_000, {
        build: { status: 'success', log: build(true) },
        test: { status: 'success', log: testLog(false) },
        lint: { status: 'success', log: lint },
        deploy: { status: 'manual' },
      });
      seedPipeline(ci, project, owner.id, c.c5 as CommitRecord, 'main', now - 5 * 86_400_000, {
        build: { status: 'success', log: build(true) },
        test: { status: 'failed', log: testLog(true), failure: 'script_failure' },
        lint: { status: 'success', log: lint },
        deploy: { status: 'skipped' },
      });
      seedPipeline(ci, project, owner.id, c.c6 as CommitRecord, 'readme', now - 2 * 86_400_000, {
        build: { status: 'success', log: build(true) },
        test: {
          status: 'running',
          log: jobLog('test', ['$ npm test', '> node --test', 'ok 1 - greets the world'], true).split('\n').slice(0, -2).join('\n') + '\n',
        },
        lint: { status: 'pending' },
        deploy: { status: 'created' },
      });
    } else if (project.path === 'handbook') {
      seedDocs(repo, who, now, [
        ['README.md', '# Handbook\n\nPublic notes of the team.\n'],
        ['onboarding/day-one.md', '# Day one\n\n1. Get an account.\n2. Read the README.\n'],
      ]);
    } else {
      seedDocs(repo, who, now, [['README.md', `# ${project.name}\n\n${project.description}\n`]]);
    }
  }
}
