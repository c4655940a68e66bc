import { Option, type Command } from 'commander';
import {
  CAPABILITIES,
  ROLES,
  TOKEN_PLANES,
  isCapability,
  isRole,
  isTokenPlane,
  type Capability,
} from '../../core/identity/identity.model.ts';
import { CliError, printJson, type CliIo } from '../../core/cli-io.ts';
import { withContext } from '../io.ts';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseCapabilities(values: string[]): Capability[] {
  return values.map((v) => {
    if (!isCapability(v)) throw new CliError(`unknown capability ${v} (expected one of ${CAPABILITIES.join(', ')})`, 2);
    return v;
  });
}

/** `platform bootstrap`, `platform humans …` and `platform tokens …`. */
export function registerIdentityCommands(program: Command, io: CliIo): void {
  program
    .command('bootstrap')
    .description('create an Account with an owner; prints the owner password, a session bearer and an all-capability platform token once')
    .option('--account-name <name>', 'name of the new Account', 'Default account')
    .option('--email <email>', 'email of the owner', 'owner@platform.local')
    .option('--json', 'print one JSON object {account_id, human_id, email, password, session_bearer, platform_token}')
    .action(async (opts: { accountName: string; email: string; json?: boolean }) => {
      const result = await withContext(io, (ctx) => ctx.identity.bootstrap({ accountName: opts.accountName, email: opts.email }));
      if (opts.json) return printJson(io, result);
      io.out(`Account ${result.account_id} created with owner ${result.email} (${result.human_id}).`);
      io.out(`  password:        ${result.password}`);
      io.out(`  session bearer:  ${result.session_bearer}`);
      io.out(`  platform token:  ${result.platform_token}`);
      io.out('These are shown once; only their hashes are stored.');
    });

  const humans = program.command('humans').description('manage the Humans of an Account');
  humans
    .command('add')
    .description('add a Human; prints a generated password once')
    .requiredOption('--account <id>', 'Account id')
    .requiredOption('--email <email>', 'email address (sign-in name)')
    .addOption(new Option('--role <role>', 'role').choices(ROLES).default('member'))
    .option('--json', 'print one JSON object {human_id, email, password, role, account_id}')
    .action(async (opts: { account: string; email: string; role: string; json?: boolean }) => {
      if (!isRole(opts.role)) throw new CliError(`unknown role ${opts.role}`, 2);
      const role = opts.role;
      const human = await withContext(io, (ctx) => ctx.identity.addHuman({ accountId: opts.account, email: opts.email, role }));
      if (opts.json) return printJson(io, human);
      io.out(`Human ${human.human_id} (${human.email}, ${human.role}) added; password (shown once): ${human.password}`);
    });
  humans
    .command('list')
    .description('list the Humans of an Account')
    .requiredOption('--account <id>', 'Account id')
    .option('--json', 'print a JSON array')
    .action(async (opts: { account: string; json?: boolean }) => {
      const list = await withContext(io, (ctx) => ctx.identity.listHumans(opts.account));
      if (opts.json) return printJson(io, list);
      for (const h of list) io.out(`${h.human_id}  ${h.email}  ${h.role}  ${h.active ? 'active' : 'deactivated'}`);
    });
  humans
    .command('set-role')
    .description('change the role of a Human (effective on their next request)')
    .argument('<human-id>')
    .argument('<role>', ROLES.join('|'))
    .option('--json', 'print the Human as JSON')
    .action(async (humanId: string, role: string, opts: { json?: boolean }) => {
      if (!isRole(role)) throw new CliError(`unknown role ${role} (expected one of ${ROLES.join(', ')})`, 2);
      const human = await withContext(io, (ctx) => ctx.identity.setRole(humanId, role));
      if (opts.json) return printJson(io, human);
      io.out(`Human ${human.human_id} is now ${human.role}.`);
    });
  humans
    .command('deactivate')
    .description('deactivate a Human: all their sessions and tokens stop working at once')
    .argument('<human-id>')
    .option('--json', 'print the Human as JSON')
    .action(async (humanId: string, opts: { json?: boolean }) => {
      const human = await withContext(io, (ctx) => ctx.identity.deactivate(humanId));
      if (opts.json) return printJson(io, human);
      io.out(`Human ${human.human_id} deactivated.`);
    });
  humans
    .command('activate')
    .description('activate a deactivated Human; their old sessions and tokens stay revoked')
    .argument('<human>', 'the Human id or email')
    .option('--json', 'print the Human as JSON')
    .action(async (humanId: string, opts: { json?: boolean }) => {
      const human = await withContext(io, async (ctx) => ctx.identity.reactivate(await ctx.identity.resolveHumanId(humanId)));
      if (opts.json) return printJson(io, human);
      io.out(`Human ${human.human_id} (${human.email}) activated. Earlier sessions and tokens stay revoked.`);
    });
  humans
    .command('reset-password')
    .description("set a new random password (shown once) and sign the Human's API sessions out; tokens stay valid")
    .argument('<human>', 'the Human id or email')
    .option('--json', 'print one JSON object {human_id, email, password, role, account_id, active, sessions_revoked}')
    .action(async (humanId: string, opts: { json?: boolean }) => {
      const human = await withContext(io, async (ctx) => ctx.identity.resetPassword(await ctx.identity.resolveHumanId(humanId)));
      if (opts.json) return printJson(io, human);
      io.out(`Human ${human.human_id} (${human.email}): new password (shown once): ${human.password}`);
      io.out(
        `  ${human.sessions_revoked} API session(s) revoked; platform, member and executor tokens stay valid (npx platform tokens revoke ID ends one).`,
      );
      if (!human.active) io.out(`  The Human is deactivated: run npx platform humans activate ${human.human_id} before they can sign in.`);
    });

  const tokens = program.command('tokens').description('manage access tokens (platform, member and executor planes)');
  tokens
    .command('create')
    .description('create a token bound to a Human; prints it once')
    .requiredOption('--human <id>', 'the Human the token acts as')
    .addOption(new Option('--plane <plane>', 'token plane').choices(TOKEN_PLANES).default('platform'))
    .option('--capability <cap>', `capability (repeatable; platform plane): ${CAPABILITIES.join(', ')}`, collect, [])
    .option('--all-capabilities', 'every capability (platform plane)')
    .option('--name <name>', 'a label to recognise the token by')
    .option('--expires-in-days <days>', 'expire after this many days')
    .option('--json', 'print one JSON object {token, id, plane, capabilities, ...}')
    .action(
      async (opts: {
        human: string;
        plane: string;
        capability: string[];
        allCapabilities?: boolean;
        name?: string;
        expiresInDays?: string;
        json?: boolean;
      }) => {
        if (!isTokenPlane(opts.plane)) throw new CliError(`unknown plane ${opts.plane}`, 2);
        const plane = opts.plane;
        const capabilities = opts.allCapabilities ? [...CAPABILITIES] : parseCapabilities(opts.capability);
        if (plane === 'platform' && capabilities.length === 0) {
          throw new CliError('a platform-plane token needs at least one --capability (or --all-capabilities)', 2);
        }
        let days: number | undefined;
        if (opts.expiresInDays !== undefined) {
          days = Number(opts.expiresInDays);
          if (!Number.isInteger(days) || days < 1 || days > 3650)
            throw new CliError('--expires-in-days must be an integer from 1 to 3650', 2);
        }
        const created = await withContext(io, (ctx) =>
          ctx.identity.createToken({
            humanId: opts.human,
            plane,
            capabilities,
            name: opts.name ?? null,
            expiresAt: days === undefined ? null : ctx.clock.now() + days * 86_400_000,
          }),
        );
        if (opts.json) return printJson(io, created);
        io.out(`Token ${created.id} (${created.plane}) created; shown once:`);
        io.out(created.token);
      },
    );
  tokens
    .command('list')
    .description('list tokens (never their values)')
    .option('--account <id>', 'only this Account')
    .option('--human <id>', 'only this Human')
    .option('--json', 'print a JSON array')
    .action(async (opts: { account?: string; human?: string; json?: boolean }) => {
      const list = await withContext(io, (ctx) =>
        ctx.identity.listTokens({ ...(opts.account ? { accountId: opts.account } : {}), ...(opts.human ? { humanId: opts.human } : {}) }),
      );
      if (opts.json) return printJson(io, list);
      for (const t of list) {
        const state = t.revoked_at ? 'revoked' : t.expires_at && t.expires_at < new Date().toISOString() ? 'expired' : 'active';
        io.out(`${t.id}  ${t.plane}  ${state}  human=${t.human_id}  ${t.name ?? ''}  ${t.capabilities.join(',')}`);
      }
    });
  tokens
    .command('revoke')
    .description('revoke a token (effective on the next request)')
    .argument('<token-id>')
    .option('--json', 'print the token record as JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const revoked = await withContext(io, (ctx) => ctx.identity.revoke(id));
      if (opts.json) return printJson(io, revoked);
      io.out(`Token ${revoked.id} revoked.`);
    });
}
