/**
 * The undo timeline as the activity panel's Timeline view shows it: the kernel's recorded
 * changes (a `changes` reply, newest first: `kli.tools.core.undo.timeline_json`) grouped per
 * session, each session's changes in time order, each with what it changed and whether it
 * stands or was undone. Pure: no DOM.
 */
import type { IChangeInfo, IToolEvent } from '../protocol';

/** The session the person's magics (and the panel's own undos) run in. */
export const MAGIC_SESSION_LABEL = 'magic';

/**
 * Who a session is, as the person reads it: their own session (their magics, and the panel's
 * buttons: the Timeline's Undo, Redo, Undo this turn) is "you"; an agent's session its label
 * (a chat's `@kli undo`: "kli in chat a.chat (undoing turn 2)"); `source` "ui" (a call event's:
 * the panel's own request) says "you, from the kli panel".
 */
export function sessionWho(label: string, source?: string | null): string {
  if (label !== MAGIC_SESSION_LABEL) {
    return label;
  }
  return source === 'ui' ? 'you, from the kli panel' : 'you';
}

export interface ITimelineFile {
  path: string;
  /** `created`, `deleted` or `modified`. */
  kind: 'created' | 'deleted' | 'modified';
  /** "+2 −1"; empty when the kernel could not count (a text not kept or changed since). */
  counts: string;
}

export interface ITimelineEntry {
  id: string;
  tool: string;
  time: number;
  /** The time as the person reads it (local clock). */
  clock: string;
  files: ITimelineFile[];
  /** "+3 −1" over the files whose lines are known. */
  counts: string;
  /** The undo that took this change back and still stands; null: the change stands. */
  undoneBy: string | null;
  /** For an undo (or redo): the changes it took back. */
  undoes: string[];
  /** One line that says what the entry is, for a person. */
  note: string;
}

export interface ISessionTimeline {
  session: string;
  label: string;
  /** The notebook whose kernel ran the session (null: made elsewhere, e.g. the CLI). */
  notebook: string | null;
  /** The heading: who (the agent's label, or the person's magics) and where (the notebook,
   * or the files when no notebook is known), e.g. "Your magics and the panel — one.ipynb". */
  title: string;
  /** Oldest first. */
  entries: ITimelineEntry[];
}

function clockOf(time: number): string {
  return new Date(time * 1000).toLocaleTimeString();
}

function kindOf(f: IChangeInfo['files'][number]): ITimelineFile['kind'] {
  return !f.existed ? 'created' : !f.after_exists ? 'deleted' : 'modified';
}

/** What an image part of a change (a ChangeFile of kind `image`: `part.not_kept`) says undo
 * cannot put back, e.g. "df was changed in place and is too large to restore: re-run cell c3". */
export function notKept(f: IChangeInfo['files'][number]): string[] {
  const part = f.kind === 'image' ? f.part : null;
  const said = part && typeof part === 'object' ? (part as { not_kept?: unknown }).not_kept : null;
  return Array.isArray(said) ? said.filter((n): n is string => typeof n === 'string') : [];
}

function countText(added: number, removed: number): string {
  return `+${added} −${removed}`;
}

/** One change as a timeline entry; `whoOf` names the session of another change by its id
 * (an undo's), so "undone by" says who undid it. */
export function toEntry(
  change: IChangeInfo,
  whoOf: (id: string) => string | undefined = () => undefined
): ITimelineEntry {
  let added = 0;
  let removed = 0;
  let known = false;
  const files = change.files.map(f => {
    const has = typeof f.added === 'number' && typeof f.removed === 'number';
    if (has) {
      added += f.added as number;
      removed += f.removed as number;
      known = true;
    }
    return {
      path: f.path,
      kind: kindOf(f),
      counts: has ? countText(f.added as number, f.removed as number) : ''
    };
  });
  const undoes = Array.isArray(change.undone)
    ? change.undone.filter((u): u is string => typeof u === 'string')
    : change.undoes
      ? [change.undoes]
      : [];
  const undoneBy = typeof change.undone_by === 'string' ? change.undone_by : null;
  const parts: string[] = [];
  if (undoes.length === 1) {
    parts.push(`${change.tool === 'redo' ? 'redo: undoes' : 'undoes'} ${undoes[0]}`);
  } else if (undoes.length > 1) {
    parts.push(`undoes ${undoes.length} changes`);
  }
  if (undoneBy) {
    const who = whoOf(undoneBy);
    parts.push(who ? `undone by ${who} (${undoneBy})` : `undone by ${undoneBy}`);
  }
  const lost = change.files.flatMap(notKept);
  if (lost.length) {
    parts.push(`undo cannot put back: ${lost.join('; ')}`);
  }
  return {
    id: change.id,
    tool: change.tool,
    time: change.time,
    clock: clockOf(change.time),
    files,
    counts: known ? countText(added, removed) : '',
    undoneBy,
    undoes,
    note: parts.join(' · ')
  };
}

/** Files a title names at most when no notebook is known. */
const TITLE_FILES = 3;

function notebookOf(change: IChangeInfo): string | null {
  return typeof change.notebook === 'string' && change.notebook ? change.notebook : null;
}

function titleOf(group: ISessionTimeline): string {
  const who = group.label === MAGIC_SESSION_LABEL ? 'Your magics and the panel' : group.label;
  let where = group.notebook;
  if (!where) {
    const paths = [...new Set(group.entries.flatMap(e => e.files.map(f => f.path)))];
    where =
      paths.slice(0, TITLE_FILES).join(', ') +
      (paths.length > TITLE_FILES ? ` and ${paths.length - TITLE_FILES} more` : '');
  }
  return where ? `${who} — ${where}` : who;
}

/** The changes (newest first, as the kernel sends them) per session, each oldest first; the
 * sessions in the order of their latest change (the busiest now first). */
export function groupBySession(changes: readonly IChangeInfo[]): ISessionTimeline[] {
  const bySession = new Map<string, ISessionTimeline>();
  const labels = new Map(changes.map(c => [c.id, c.session_label || c.session]));
  const whoOf = (id: string): string | undefined => {
    const label = labels.get(id);
    return label === undefined ? undefined : sessionWho(label);
  };
  for (const change of changes) {
    let group = bySession.get(change.session);
    if (!group) {
      group = {
        session: change.session,
        label: change.session_label || change.session,
        notebook: notebookOf(change),
        title: '',
        entries: []
      };
      bySession.set(change.session, group);
    }
    group.entries.push(toEntry(change, whoOf));
  }
  for (const group of bySession.values()) {
    group.entries.sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    group.title = titleOf(group);
  }
  return [...bySession.values()];
}

/** What the Timeline of one notebook shows: the changes its kernel made (`notebook`: the
 * `changes` reply's, the notebook the kernel was started for), or every change in the folder
 * when `all` is asked or the kernel knows no notebook; `others`: how many it leaves out. */
export function ofNotebook(
  changes: readonly IChangeInfo[],
  notebook: string | null | undefined,
  all: boolean
): { shown: IChangeInfo[]; others: number } {
  if (!notebook) {
    return { shown: [...changes], others: 0 };
  }
  const mine = changes.filter(c => notebookOf(c) === notebook);
  return { shown: all ? [...changes] : mine, others: changes.length - mine.length };
}

function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

/** The Timeline's status line: what it shows, plainly, and what it leaves out. */
export function timelineStatus(o: {
  notebook: string | null | undefined;
  all: boolean;
  shown: number;
  sessions: number;
  others: number;
  total: number;
  received: number;
}): string {
  const cut = o.total > o.received ? ` (the newest ${o.received} of ${o.total} read)` : '';
  if (!o.notebook) {
    return o.shown
      ? `${plural(o.shown, 'change')} in this folder, ${plural(o.sessions, 'session')}${cut} ` +
          '(this kernel was not started for a notebook, so every change here is shown).'
      : 'No recorded changes yet: every change made through the tools appears here.';
  }
  if (o.all) {
    return (
      `Every change in this folder: ${plural(o.shown, 'change')}, ` +
      `${plural(o.sessions, 'session')}, ${o.others} of them from other notebooks or tools${cut}.`
    );
  }
  const mine = o.shown
    ? `${plural(o.shown, 'change')} made from ${o.notebook}, ${plural(o.sessions, 'session')}`
    : `No changes made from ${o.notebook} yet`;
  const rest = o.others
    ? `; ${plural(o.others, 'change')} from other notebooks or tools in this folder not shown`
    : '';
  return `${mine}${rest}${cut}.`;
}

/** What, in the events, means the timeline is out of date: the change ids the calls recorded
 * (an undo and a redo are calls that record one too). Compare two keys to know. */
export function changesKey(events: readonly IToolEvent[]): string {
  const ids: string[] = [];
  for (const e of events) {
    const change = e.details?.change;
    if (typeof change === 'string') {
      ids.push(change);
    }
  }
  return `${ids.length}:${ids[ids.length - 1] ?? ''}:${ids[0] ?? ''}`;
}

/** The `undo` request of an entry's buttons: Undo takes the change back; on an undone entry,
 * Redo takes back the undo that undid it (the undo of that undo). */
export function undoScope(entry: ITimelineEntry): { change: string } {
  return { change: entry.undoneBy ?? entry.id };
}

/** A chat turn's session (the Jupyter AI persona labels each `chat NAME turn N`). */
const CHAT_TURN = /^chat .+ turn \d+$/;

/**
 * The header button that takes back everything one session did (its oldest change onwards):
 * "Undo this turn" for a chat turn's session, "Undo this session" for any other. None (a null
 * scope) when every change of the session is undone already: nothing is left to take back.
 */
export function wholeSession(group: ISessionTimeline): {
  words: string;
  title: string;
  scope: { session: string; since: string } | null;
} {
  const turn = CHAT_TURN.test(group.label);
  const first = group.entries[0];
  return {
    words: turn ? 'Undo this turn' : 'Undo this session',
    title: turn
      ? `Take back everything ${group.label} changed, in one step (refused naming any file or cell changed since)`
      : `Take back everything ${group.label} changed (refused naming any file or cell changed since)`,
    scope: first && !group.entries.every(e => e.undoneBy) ? sinceScope(group, first) : null
  };
}

/** "Undo everything <session> did since here": since this entry's time, in epoch seconds
 * (what `undo` takes as `since`), of its session. */
export function sinceScope(
  group: ISessionTimeline,
  entry: ITimelineEntry
): { session: string; since: string } {
  return { session: group.session, since: String(entry.time) };
}
