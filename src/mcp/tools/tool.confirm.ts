/**
 * High-impact writes ask first (issue 18 item 2): merging, deleting a branch, tag, file or wiki page, cancelling a
 * pipeline on a protected ref, making a confidential issue public. A tool calls `await ctx.confirm(summary)` just
 * before the write; it returns when the person agreed, and otherwise ends the call with the question:
 *
 * 1. **2026-07-28** (the request carries the `_meta` envelope) and the client declared `elicitation`: the call
 *    answers `input_required` with a form elicitation (`confirm: boolean`); the client asks its user and retries
 *    with `inputResponses` and the `requestState` we sealed. That state is made like a confirmation token (below),
 *    under a label of its own ({@link ConfirmationPurpose}), so a retry with other arguments, by another user,
 *    after 5 minutes or a second time is refused, and neither value passes for the other.
 * 2. **2025 revisions on a connection that can carry server requests** (stdio; a stateless HTTP request never saw
 *    `initialize`, so no client capabilities are known there) and the client declared `elicitation`: a form
 *    elicitation pushed with `elicitInput`, answered in the same call.
 * 3. **Otherwise** a server-minted `confirmation_token`: the call answers `{confirmation_required: {token,
 *    expires_at, summary}}` (not an error) and the tool is called again with the same arguments plus
 *    `confirmation_token` once the person agreed. A flag the model could set itself is not a confirmation: the
 *    token is an HMAC (server secret) over the tool, the exact arguments, the forge token's hash, an expiry and a
 *    random nonce; the nonce is consumed on use (ReplayCache: in process, or Redis shared by replicas, see
 *    mcp.app.ts).
 *
 * The summary a tool passes holds forge text (a commit title, a job name): tools quote such values with
 * tool.text.ts `quoted`, and `confirm` cleans the whole summary as tool results are cleaned.
 *
 * Declined or cancelled: a `forbidden` tool error that says so; nothing is written.
 *
 * For a tool: spread {@link confirmationInput} into its input schema, set `confirms: true` on its declaration (its
 * advertised output then admits the confirmation answer), and call `ctx.confirm(summary)` before the write.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { inputRequired, inputResponse, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ReplayCache } from '../oauth/oauth.replay.ts';
import { sanitizeText } from './tool.text.ts';

/** How long a confirmation (token or sealed request state) is valid. */
export const CONFIRMATION_TTL_MS = 5 * 60_000;

/** The input field of tools that confirm. */
export const confirmationInput = {
  confirmation_token: z.string().max(1000).optional().describe('From confirmation_required, once the user agreed'),
};

/** The answer of a call that needs the person's agreement first (strategy 3). */
export const confirmationOutput = z
  .object({
    confirmation_required: z
      .object({
        summary: z.string().describe('What the call will do: show it to the user and ask'),
        token: z.string().describe('Pass as confirmation_token, with the same arguments, once the user agreed'),
        expires_at: z.string().describe('When the token expires (ISO 8601)'),
      })
      .describe('The user must agree before this write runs'),
  })
  .strict();

/** Thrown by `confirm` to end the call with `result` (the question); caught by the tool contract. */
export class ConfirmationPending extends Error {
  constructor(readonly result: CallToolResult) {
    super('confirmation pending');
  }
}

/** Thrown when the person declined, or a token does not fit; the message says which. */
export class ConfirmationRefused extends Error {}

export interface ConfirmerDeps {
  /** HMAC key, the same on every replica (OAUTH_STATELESS_SECRET when set; else a per-process random key). */
  secret: Buffer;
  /** Records used nonces until they expire (Redis-backed across replicas when configured). */
  replay: ReplayCache;
  now?: () => number;
}

/** What a confirmation is bound to. */
export interface ConfirmationSubject {
  tool: string;
  /** The call's arguments; `confirmation_token` is left out of the binding. */
  args: Record<string, unknown>;
  /** The forge token of the caller (bound by hash: a token minted for one user is useless to another). */
  forgeToken: string;
}

/** The request side a confirmation needs from the SDK. */
export interface ConfirmationChannel {
  request: ServerContext;
  /** The client's declared capabilities, when known on this connection. */
  clientCapabilities: { elicitation?: object | undefined } | undefined;
}

/**
 * What a minted value is for. Each is signed under its own label, so neither passes for the other: a sealed
 * requestState stands for "the client will ask its user", and redeemed as a confirmation_token it would skip the
 * question; a confirmation_token handed back as requestState would pass for the user's answer to a question never
 * asked in that exchange.
 */
export type ConfirmationPurpose = 'confirmation_token' | 'request_state';

const PURPOSE_LABEL: Record<ConfirmationPurpose, string> = {
  confirmation_token: 'forge-mcp.confirm.token.v2',
  request_state: 'forge-mcp.confirm.request-state.v2',
};

/** How refusals name the value, and what to do instead. */
const PURPOSE_WORDS: Record<ConfirmationPurpose, { name: string; again: string }> = {
  confirmation_token: { name: 'confirmation_token', again: 'call without it to get a new one' },
  request_state: { name: 'the confirmation request state', again: 'call again without inputResponses to be asked anew' },
};

interface TokenPayload {
  /** sha256 of tool + canonical arguments + forge-token hash. */
  b: string;
  /** Expiry, epoch ms. */
  e: number;
  /** Nonce. */
  n: string;
}

/** JSON with object keys sorted, so equal arguments bind equally whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function bindingOf(subject: ConfirmationSubject): string {
  const { confirmation_token: _token, ...args } = subject.args;
  const user = createHash('sha256').update(subject.forgeToken).digest('base64url');
  return createHash('sha256')
    .update(`${subject.tool}\n${canonical(args)}\n${user}`)
    .digest('base64url');
}

const FORM = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const, title: 'Go ahead', description: 'Check to go ahead' } },
  required: ['confirm'],
};

/** The confirmation machinery of one process; `confirm` is what `ctx.confirm` calls. */
export function createConfirmer(deps: ConfirmerDeps) {
  const now = deps.now ?? Date.now;

  const sign = (purpose: ConfirmationPurpose, body: string) =>
    createHmac('sha256', deps.secret).update(`${PURPOSE_LABEL[purpose]}\n${body}`).digest('base64url');

  const mint = (
    subject: ConfirmationSubject,
    purpose: ConfirmationPurpose = 'confirmation_token',
  ): { token: string; expiresAt: number } => {
    const payload: TokenPayload = { b: bindingOf(subject), e: now() + CONFIRMATION_TTL_MS, n: randomBytes(12).toString('base64url') };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return { token: `${body}.${sign(purpose, body)}`, expiresAt: payload.e };
  };

  /** Checks a token (or sealed request state) against the call and consumes it; throws ConfirmationRefused with the reason. */
  const redeem = async (
    token: string,
    subject: ConfirmationSubject,
    purpose: ConfirmationPurpose = 'confirmation_token',
  ): Promise<void> => {
    const { name, again } = PURPOSE_WORDS[purpose];
    const [body, mac, extra] = token.split('.');
    const expected = body === undefined ? '' : sign(purpose, body);
    if (body === undefined || mac === undefined || extra !== undefined || mac.length !== expected.length)
      throw new ConfirmationRefused(`${name} is not one this server issued; ${again}`);
    if (!timingSafeEqual(Buffer.from(mac), Buffer.from(expected)))
      throw new ConfirmationRefused(`${name} is not one this server issued; ${again}`);
    let payload: TokenPayload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as TokenPayload;
    } catch {
      throw new ConfirmationRefused(`${name} is malformed; ${again}`);
    }
    if (payload.b !== bindingOf(subject))
      throw new ConfirmationRefused(
        `${name} was issued for other arguments (or another tool or user); the user must confirm these arguments: ${again}`,
      );
    if (typeof payload.e !== 'number' || payload.e <= now())
      throw new ConfirmationRefused(`${name} has expired (they last 5 minutes); ${again}`);
    if (!(await deps.replay.consume(`confirm:${payload.n}`, payload.e)))
      throw new ConfirmationRefused(`${name} was already used; ${again}`);
  };

  /**
   * Returns when the write may go ahead; throws {@link ConfirmationPending} with the question to answer, or
   * {@link ConfirmationRefused} when the person declined or a token does not fit.
   */
  const confirm = async (rawSummary: string, subject: ConfirmationSubject, channel: ConfirmationChannel): Promise<void> => {
    // Summaries carry forge text (titles, branch and job names; tools quote it with tool.text.ts `quoted`): cleaned
    // as every tool result is, before it reaches the user's question or the model.
    const summary = sanitizeText(rawSummary).replace(/\.$/, '');
    const token = subject.args.confirmation_token;
    if (typeof token === 'string' && token !== '') return redeem(token, subject);

    const mcpReq = channel.request.mcpReq;
    const envelope = (mcpReq.envelope ?? {}) as Record<string, unknown>;
    const modern = envelope['io.modelcontextprotocol/protocolVersion'] !== undefined;
    const canElicit = channel.clientCapabilities?.elicitation !== undefined;

    if (modern) {
      const answer = inputResponse(mcpReq.inputResponses, 'confirm');
      if (answer.kind === 'elicit') {
        const state = mcpReq.requestState();
        if (typeof state !== 'string') throw new ConfirmationRefused('the confirmation answer came without its request state; call again');
        await redeem(state, subject, 'request_state');
        if (answer.action !== 'accept' || answer.content?.confirm !== true)
          throw new ConfirmationRefused(`The user did not confirm: ${summary} was not done.`);
        return;
      }
      if (canElicit) {
        const { token: state } = mint(subject, 'request_state');
        throw new ConfirmationPending(
          inputRequired({
            inputRequests: { confirm: inputRequired.elicit({ mode: 'form', message: `${summary}. Go ahead?`, requestedSchema: FORM }) },
            requestState: state,
          }) as unknown as CallToolResult,
        );
      }
    } else if (canElicit) {
      const answer = await mcpReq.elicitInput({ mode: 'form', message: `${summary}. Go ahead?`, requestedSchema: FORM });
      if (answer.action === 'accept' && answer.content?.confirm === true) return;
      throw new ConfirmationRefused(`The user did not confirm: ${summary} was not done.`);
    }

    const minted = mint(subject);
    const value = { confirmation_required: { summary, token: minted.token, expires_at: new Date(minted.expiresAt).toISOString() } };
    throw new ConfirmationPending({
      content: [
        {
          type: 'text',
          text: `Confirmation required: ${summary}. Ask the user; only if they agree, call ${subject.tool} again with the same arguments and confirmation_token "${minted.token}" (valid 5 minutes, once).`,
        },
      ],
      structuredContent: value,
    });
  };

  return { confirm, mint, redeem };
}

export type Confirmer = ReturnType<typeof createConfirmer>;
