/**
 * `add_commit`'s actions as GitLab commit actions. An update by `old`/`new` replaces one exact occurrence in the
 * file as the actions before it in the same call leave it: several edits of one file apply one after another on
 * one text and become one action, so none is lost to a later one that started from the file at the branch. The
 * first edit of a file this call has not touched reads it from the forge, and the read's commit becomes
 * `last_commit_id`, so a concurrent change makes the commit fail instead of being overwritten.
 *
 * Errors name the action by its place in `actions`, never by echoing what the client sent.
 */
import type { Json } from './forge.entities.ts';
import { ToolInputError } from './tool.contract.ts';

export interface ActionArgs {
  action: 'create' | 'update' | 'move' | 'delete' | 'chmod';
  file_path: string;
  previous_path?: string | undefined;
  content?: string | undefined;
  encoding?: 'text' | 'base64' | undefined;
  old?: string | undefined;
  new?: string | undefined;
  last_commit_id?: string | undefined;
  execute_filemode?: boolean | undefined;
}

type Replacement = ActionArgs & { old: string; new: string };

const isReplacement = (a: ActionArgs): a is Replacement => a.old !== undefined || a.new !== undefined;

/** Refuses malformed actions before anything is read or asked: no forge call is spent on a call that cannot commit. */
export function checkActions(actions: readonly ActionArgs[]): void {
  actions.forEach((a, i) => {
    const name = `actions[${i}]`;
    if (isReplacement(a)) {
      if (a.action !== 'update') throw new ToolInputError(`${name}: old/new are for update actions only`);
      if (a.content !== undefined) throw new ToolInputError(`${name}: give either content or old/new, not both`);
      if (a.old === undefined || a.new === undefined || a.old === '')
        throw new ToolInputError(`${name}: old and new are both needed, old not empty`);
    } else if (a.content === undefined && (a.action === 'create' || a.action === 'update')) {
      throw new ToolInputError(`${name}: ${a.action} needs content (or old/new for an update)`);
    }
    if (a.action === 'move' && a.previous_path === undefined) throw new ToolInputError(`${name}: move needs previous_path`);
  });
}

/**
 * What the call has made of a path so far: the emitted action that last set its content, with that content as
 * text (undefined for a move that carries the content of a file not read yet, from `source`), or `gone` once it
 * was deleted or moved away.
 */
type PathState = { action: Record<string, unknown>; text: string | undefined; source?: string } | 'gone';

/** UTF-8 text of bytes, or undefined when they are not (an edit by text would corrupt them). */
function textOf(bytes: Buffer): string | undefined {
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
}

function contentText(content: string, encoding: 'text' | 'base64' | undefined): string | undefined {
  return encoding === 'base64' ? textOf(Buffer.from(content, 'base64')) : content;
}

/**
 * The GitLab actions for `actions` (checked by {@link checkActions}), in order. `read` fetches a file at the branch
 * (the forge's file answer: base64 `content`, `last_commit_id`); files edited by old/new that no earlier action
 * touches are read at once, in parallel.
 */
export async function resolveActions(
  actions: readonly ActionArgs[],
  read: (path: string) => Promise<Json>,
): Promise<Record<string, unknown>[]> {
  const reads = new Map<string, Promise<Json>>();
  const readOnce = (path: string): Promise<Json> => {
    let pending = reads.get(path);
    if (!pending) {
      pending = read(path);
      // A read started ahead is left unawaited when an earlier action is refused: not an unhandled rejection.
      pending.catch(() => undefined);
      reads.set(path, pending);
    }
    return pending;
  };
  const touched = new Set<string>();
  for (const a of actions) {
    if (isReplacement(a) && !touched.has(a.file_path)) void readOnce(a.file_path);
    touched.add(a.file_path);
    if (a.previous_path !== undefined) touched.add(a.previous_path);
  }

  const out: Record<string, unknown>[] = [];
  const paths = new Map<string, PathState>();
  for (const [i, a] of actions.entries()) {
    if (isReplacement(a)) {
      await replace(`actions[${i}]`, a, paths, out, readOnce);
      continue;
    }
    const action: Record<string, unknown> = { action: a.action, file_path: a.file_path };
    if (a.previous_path !== undefined) action.previous_path = a.previous_path;
    if (a.last_commit_id !== undefined) action.last_commit_id = a.last_commit_id;
    if (a.execute_filemode !== undefined) action.execute_filemode = a.execute_filemode;
    if (a.content !== undefined) {
      action.content = a.content;
      action.encoding = a.encoding ?? 'text';
    }
    out.push(action);
    if (a.action === 'delete') paths.set(a.file_path, 'gone');
    else if (a.action === 'create' || a.action === 'update')
      paths.set(a.file_path, { action, text: contentText(a.content ?? '', a.encoding) });
    else if (a.action === 'move' && a.previous_path !== undefined) {
      const from = paths.get(a.previous_path);
      paths.set(a.previous_path, 'gone');
      if (a.content !== undefined) paths.set(a.file_path, { action, text: contentText(a.content, a.encoding) });
      // Without content a move keeps the source's content as the earlier actions left it, or as the branch has it.
      else if (from !== undefined && from !== 'gone')
        paths.set(a.file_path, { action, text: from.text, ...(from.source ? { source: from.source } : {}) });
      else paths.set(a.file_path, { action, text: undefined, source: a.previous_path });
    }
  }
  return out;
}

/** Applies one old/new edit on the file as the call left it so far, folding it into the action that holds it. */
async function replace(
  name: string,
  a: Replacement,
  paths: Map<string, PathState>,
  out: Record<string, unknown>[],
  read: (path: string) => Promise<Json>,
): Promise<void> {
  const prior = paths.get(a.file_path);
  if (prior === 'gone') throw new ToolInputError(`${name}: an earlier action of this call deleted or moved that file away`);
  let state = prior;
  if (state === undefined) {
    const file = await read(a.file_path);
    // The caller's guard, else the commit the edit is based on.
    const action: Record<string, unknown> = {
      action: 'update',
      file_path: a.file_path,
      last_commit_id: a.last_commit_id ?? file.last_commit_id,
    };
    state = { action, text: textOf(Buffer.from(String(file.content), 'base64')) };
    out.push(action);
    paths.set(a.file_path, state);
  } else if (state.text === undefined && state.source !== undefined) {
    // A moved file whose content is still the branch's: read it from where it was, and guard the move by that read.
    const file = await read(state.source);
    state.text = textOf(Buffer.from(String(file.content), 'base64'));
    state.action.last_commit_id ??= file.last_commit_id;
  }
  const after = prior === undefined ? '' : ' as the earlier actions of this call leave it';
  if (state.text === undefined) throw new ToolInputError(`${name}: the file${after} is not UTF-8 text; update it by content`);
  const first = state.text.indexOf(a.old);
  if (first < 0) throw new ToolInputError(`${name}: old text not found in the file${after}; read it again and copy the text exactly`);
  if (state.text.indexOf(a.old, first + 1) >= 0)
    throw new ToolInputError(`${name}: old text occurs more than once in the file${after}; include more context`);
  state.text = state.text.slice(0, first) + a.new + state.text.slice(first + a.old.length);
  const { action } = state;
  action.content = state.text;
  action.encoding = 'text';
  // A later edit's guard must agree with the one the file's action already carries: one action has one guard.
  if (a.last_commit_id !== undefined && prior !== undefined) {
    if (action.last_commit_id !== undefined && action.last_commit_id !== a.last_commit_id)
      throw new ToolInputError(`${name}: last_commit_id differs from the one an earlier action of this call on the file holds`);
    action.last_commit_id = a.last_commit_id;
  }
  if (a.execute_filemode !== undefined) {
    if (action.action === 'move') throw new ToolInputError(`${name}: set execute_filemode of a moved file with a chmod action`);
    action.execute_filemode = a.execute_filemode;
  }
}
