/**
 * The dev forge's project wikis, releases, milestones, CI/CD variables, webhooks and memberships (issue 18 items 1
 * and 4, the opt-in `wiki`, `releases` and `admin` toolsets), in memory, with a plain-JSON snapshot the state file
 * keeps (devforge.state.records.ts) so a restart does not undo them.
 */
import type { DevForgeStore } from './devforge.store.ts';
import type { ProjectRecord } from './devforge.types.ts';

export type WikiFormat = 'markdown' | 'rdoc' | 'asciidoc' | 'org';
export const WIKI_FORMATS: readonly WikiFormat[] = ['markdown', 'rdoc', 'asciidoc', 'org'];

export interface WikiPageRecord {
  slug: string;
  title: string;
  format: WikiFormat;
  content: string;
  updatedAt: number;
}

export interface ReleaseRecord {
  tagName: string;
  name: string;
  description: string;
  authorId: number;
  /** The sha the tag pointed at when the release was made. */
  sha: string;
  milestoneIds: number[];
  createdAt: number;
  releasedAt: number;
}

export interface MilestoneRecord {
  id: number;
  iid: number;
  projectId: number;
  title: string;
  description: string;
  state: 'active' | 'closed';
  /** `YYYY-MM-DD` or null, as GitLab stores dates. */
  dueDate: string | null;
  startDate: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface VariableRecord {
  key: string;
  value: string;
  variableType: 'env_var' | 'file';
  protected: boolean;
  masked: boolean;
  /** Masked and hidden: GitLab returns no value for it, even to maintainers. */
  hidden: boolean;
  raw: boolean;
  environmentScope: string;
  description: string | null;
}

/** The event switches of a project hook, by GitLab's parameter name. */
export const HOOK_EVENTS = [
  'push_events',
  'issues_events',
  'confidential_issues_events',
  'merge_requests_events',
  'tag_push_events',
  'note_events',
  'confidential_note_events',
  'job_events',
  'pipeline_events',
  'wiki_page_events',
  'deployment_events',
  'releases_events',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export interface HookRecord {
  id: number;
  projectId: number;
  url: string;
  name: string;
  description: string;
  /** Write-only: sent as `X-Gitlab-Token`, never returned by the API. */
  token: string;
  events: Record<HookEvent, boolean>;
  pushEventsBranchFilter: string;
  enableSslVerification: boolean;
  createdAt: number;
}

/** A membership's details (GitLab's `Member`); the project's `memberIds` say who is a member. */
export interface MemberRecord {
  accessLevel: number;
  createdAt: number;
  createdById: number;
  /** `YYYY-MM-DD` or null. */
  expiresAt: string | null;
}

export interface ProjectExtras {
  wiki: Map<string, WikiPageRecord>;
  releases: Map<string, ReleaseRecord>;
  milestones: MilestoneRecord[];
  variables: Map<string, VariableRecord>;
  hooks: HookRecord[];
  /** Membership details by user id; a member not listed is an Owner since the project's creation (the seed's). */
  members: Map<number, MemberRecord>;
}

export interface DevForgeExtras {
  of(projectId: number): ProjectExtras;
  nextMilestoneId(): number;
  nextHookId(): number;
}

/** The extras as plain JSON, for the state file. */
export interface ExtrasSnapshot {
  projects: {
    projectId: number;
    wiki: WikiPageRecord[];
    releases: ReleaseRecord[];
    milestones: MilestoneRecord[];
    variables: VariableRecord[];
    hooks: HookRecord[];
    members: [number, MemberRecord][];
  }[];
  counters: { milestone: number; hook: number };
}

export interface DevForgeExtrasStore extends DevForgeExtras {
  snapshot(): ExtrasSnapshot;
}

/** Empty extras, or those of `restore` (a snapshot from the state file). */
export function createDevForgeExtras(restore?: ExtrasSnapshot): DevForgeExtrasStore {
  const byProject = new Map<number, ProjectExtras>();
  let milestoneId = restore?.counters.milestone ?? 0;
  let hookId = restore?.counters.hook ?? 0;
  for (const p of restore?.projects ?? [])
    byProject.set(p.projectId, {
      wiki: new Map(p.wiki.map((w) => [w.slug, w])),
      releases: new Map(p.releases.map((r) => [r.tagName, r])),
      milestones: p.milestones,
      variables: new Map(p.variables.map((v) => [v.key, v])),
      hooks: p.hooks,
      members: new Map(p.members),
    });
  return {
    of(projectId) {
      let extras = byProject.get(projectId);
      if (!extras) {
        extras = { wiki: new Map(), releases: new Map(), milestones: [], variables: new Map(), hooks: [], members: new Map() };
        byProject.set(projectId, extras);
      }
      return extras;
    },
    nextMilestoneId: () => ++milestoneId,
    nextHookId: () => ++hookId,
    snapshot: () => ({
      projects: [...byProject].map(([projectId, x]) => ({
        projectId,
        wiki: [...x.wiki.values()],
        releases: [...x.releases.values()],
        milestones: x.milestones,
        variables: [...x.variables.values()],
        hooks: x.hooks,
        members: [...x.members],
      })),
      counters: { milestone: milestoneId, hook: hookId },
    }),
  };
}

/** GitLab's wiki slug of a title: spaces become dashes, the rest is kept (a `/` makes a sub-page). */
export function wikiSlug(title: string): string {
  return title.trim().replace(/\s+/g, '-');
}

/** GitLab's Owner access level. */
export const OWNER = 50;

/** The membership of `userId` in `project` (undefined for a non-member). */
export function memberOf(extras: DevForgeExtras, project: ProjectRecord, userId: number): MemberRecord | undefined {
  if (!project.memberIds.includes(userId)) return undefined;
  return (
    extras.of(project.id).members.get(userId) ?? {
      accessLevel: OWNER,
      createdAt: project.createdAt,
      createdById: project.creatorId,
      expiresAt: null,
    }
  );
}

/** The access level of a member of `project` (undefined for a non-member). */
export function accessLevelOf(extras: DevForgeExtras, project: ProjectRecord, userId: number): number | undefined {
  return memberOf(extras, project, userId)?.accessLevel;
}

const DAY = 86_400_000;
const dateOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Demo data: in every `hello-forge`, three wiki pages, five milestones (one closed), a release on the seeded
 * `v1.0.0` tag, three CI/CD variables (one masked, one masked and hidden) and a webhook; in the demo group's
 * projects the members after the first are Developers.
 */
export function seedExtras(
  store: DevForgeStore,
  extras: DevForgeExtras,
  now: number,
  tagSha: (project: ProjectRecord, tag: string) => string | undefined,
): void {
  for (const project of store.projects.values()) {
    const x = extras.of(project.id);
    if (project.namespace.kind === 'group')
      for (const id of project.memberIds.slice(1))
        x.members.set(id, { accessLevel: 30, createdAt: project.createdAt, createdById: project.creatorId, expiresAt: null });
    if (project.path !== 'hello-forge') continue;
    const page = (title: string, content: string, format: WikiFormat = 'markdown') =>
      x.wiki.set(wikiSlug(title), { slug: wikiSlug(title), title, format, content, updatedAt: now - 3 * DAY });
    page('home', '# hello-forge wiki\n\nStart with [Getting started](getting-started) and the [deploy notes](ops/deploy).\n');
    page('getting started', '## Getting started\n\n1. `npm ci`\n2. `npm test`\n3. `node src/app.ts Ada`\n');
    page('ops/deploy', '## Deploying\n\nThe `deploy` job is manual; it runs `scripts/deploy.sh` with DEPLOY_TARGET.\n');
    const milestone = (title: string, state: MilestoneRecord['state'], start: number, due: number) => {
      const m: MilestoneRecord = {
        id: extras.nextMilestoneId(),
        iid: x.milestones.length + 1,
        projectId: project.id,
        title,
        description: `Work planned for ${title}.`,
        state,
        startDate: dateOf(now + start * DAY),
        dueDate: dateOf(now + due * DAY),
        createdAt: now - 40 * DAY,
        updatedAt: now - 40 * DAY,
      };
      x.milestones.push(m);
      return m;
    };
    const v1 = milestone('v1.0', 'closed', -40, -10);
    milestone('v1.1', 'active', -10, 10);
    milestone('v1.2', 'active', 10, 30);
    milestone('v2.0', 'active', 30, 90);
    milestone('Backlog', 'active', -40, 365);
    const sha = tagSha(project, 'v1.0.0');
    if (sha)
      x.releases.set('v1.0.0', {
        tagName: 'v1.0.0',
        name: 'hello-forge 1.0',
        description: '## Highlights\n\n- A greeting module\n- CI with build, test, lint and a manual deploy\n',
        authorId: project.creatorId,
        sha,
        milestoneIds: [v1.id],
        createdAt: now - 10 * DAY,
        releasedAt: now - 10 * DAY,
      });
    const variable = (key: string, value: string, fields: Partial<VariableRecord> = {}) =>
      x.variables.set(key, {
        key,
        value,
        variableType: 'env_var',
        protected: false,
        masked: false,
        hidden: false,
        raw: false,
        environmentScope: '*',
        description: null,
        ...fields,
      });
    variable('DEPLOY_TARGET', 'staging.example.test', { description: 'Where the deploy job deploys' });
    variable('DEPLOY_TOKEN', 'devforge-deploy-token-0001', { masked: true, protected: true, description: 'Deploy credentials' });
    variable('SIGNING_KEY', 'devforge-signing-key-0002', { masked: true, hidden: true, environmentScope: 'production' });
    const events = Object.fromEntries(HOOK_EVENTS.map((e) => [e, e === 'push_events' || e === 'pipeline_events'])) as Record<
      HookEvent,
      boolean
    >;
    x.hooks.push({
      id: extras.nextHookId(),
      projectId: project.id,
      url: 'https://ci-bridge.example.test/hooks/hello-forge',
      name: 'CI bridge',
      description: 'Tells the CI bridge about pushes and pipelines.',
      token: 'devforge-hook-secret',
      events,
      pushEventsBranchFilter: 'main',
      enableSslVerification: true,
      createdAt: now - 20 * DAY,
    });
  }
}
