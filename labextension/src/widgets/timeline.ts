/**
 * The activity panel's Timeline view: per session (each agent, and the person's magics), the
 * changes made from this notebook (its kernel's; a button shows the folder's other notebooks'
 * and tools' too, and the status line says how many it leaves out), in time order (the kernel's `changes` reply: time, tool, files, +/− lines,
 * undone or not), each with Undo (or Redo when it was undone) and "Undo everything since
 * here" for its session. A refused undo shows the kernel's reason, which names the file, and
 * an "Undo anyway" button: pressing it is the person's confirmation (`force`). The view reads
 * the timeline again whenever a call event records a change (an undo is a change too, so it
 * appears as its own entry, and can be undone: the redo).
 */
import { Widget } from '@lumino/widgets';
import type { UiConnection } from '../connection';
import { panelText } from '../protocol';
import type { IChangeInfo } from '../protocol';
import {
  ISessionTimeline,
  ITimelineEntry,
  changesKey,
  groupBySession,
  ofNotebook,
  sinceScope,
  timelineStatus,
  undoScope,
  wholeSession
} from '../model/timeline';
import { pathText } from './pathtext';
import { button } from './repair';

type UndoScope = { change?: string; session?: string; since?: string; force?: boolean };

/** What the last button pressed on an entry came to: the kernel's text, and for a refusal
 * because a file changed, the request "Undo anyway" repeats with `force`. */
interface IOutcome {
  text: string;
  ok: boolean;
  force: UndoScope | null;
}

export class TimelineView extends Widget {
  constructor() {
    super({ node: document.createElement('section') });
    this.addClass('kli-Timeline');
    const head = document.createElement('div');
    head.className = 'kli-Timeline-head';
    const title = document.createElement('h3');
    title.textContent = 'Timeline';
    const refresh = button('Refresh', 'kli-Timeline-refresh', () => void this.refresh());
    refresh.title = 'Read the recorded changes again';
    this._scope = button('', 'kli-Timeline-scope', () => {
      this._all = !this._all;
      this._draw();
    });
    this._status = document.createElement('p');
    this._status.className = 'kli-Timeline-status';
    this._status.setAttribute('role', 'status');
    head.append(title, refresh, this._scope, this._status);
    this._body = document.createElement('div');
    this._body.className = 'kli-Timeline-body';
    this._body.setAttribute('aria-live', 'polite');
    this.node.append(head, this._body);
  }

  /** The connection to show (null: none); called on every change of the panel's state. */
  setConnection(conn: UiConnection | null): void {
    if (conn !== this._conn) {
      this._conn = conn;
      this._key = null;
      this._changes = [];
      this._notebook = null;
      this._all = false;
      this._outcomes.clear();
      this._draw();
    }
    if (!conn || !conn.state.ready) {
      return;
    }
    const key = changesKey(conn.state.events);
    if (key !== this._key && this.isVisible) {
      void this.refresh();
    }
  }

  /** Ask the kernel for the timeline again (one request at a time; a later ask waits). */
  async refresh(): Promise<void> {
    const conn = this._conn;
    if (!conn) {
      this._draw();
      return;
    }
    if (this._loading) {
      this._again = true;
      return;
    }
    this._loading = true;
    this._key = changesKey(conn.state.events);
    try {
      const reply = await conn.changes();
      if (conn !== this._conn) {
        return;
      }
      if (reply.op === 'changes') {
        this._changes = reply.changes;
        this._notebook = typeof reply.notebook === 'string' ? reply.notebook : null;
        this._total = reply.total;
        this._error = '';
      } else {
        this._error = reply.text;
      }
      this._draw();
    } finally {
      this._loading = false;
      if (this._again) {
        this._again = false;
        void this.refresh();
      }
    }
  }

  protected onAfterShow(): void {
    if (this._conn?.state.ready) {
      void this.refresh();
    }
  }

  /** Send one `undo` request for the entry `entryId`; `said` heads its outcome (a Redo is the
   * undo of the undo, and its kernel text says so). */
  private async _undo(entryId: string, scope: UndoScope, said = ''): Promise<void> {
    const conn = this._conn;
    if (!conn || this._busy) {
      return;
    }
    this._busy = true;
    this._outcomes.set(entryId, { text: 'Sending…', ok: true, force: null });
    this._draw();
    try {
      const reply = await conn.undo(scope);
      const refusedChanged =
        reply.op === 'result' && !reply.ok && reply.details?.error === 'changed';
      this._outcomes.set(entryId, {
        text: said + panelText(reply),
        ok: reply.op === 'result' && reply.ok,
        force: refusedChanged ? { ...scope, force: true } : null
      });
    } finally {
      this._busy = false;
    }
    await this.refresh();
    this._draw();
  }

  private _draw(): void {
    const { shown, others } = ofNotebook(this._changes, this._notebook, this._all);
    const groups = groupBySession(shown);
    this._status.textContent = !this._conn
      ? ''
      : this._error
        ? this._error
        : timelineStatus({
            notebook: this._notebook,
            all: this._all,
            shown: shown.length,
            sessions: groups.length,
            others,
            total: this._total,
            received: this._changes.length
          });
    this._scope.hidden = !this._conn || !this._notebook || (!others && !this._all);
    this._scope.textContent = this._all
      ? `Only ${this._notebook ?? 'this notebook'}'s changes`
      : `Show the folder's other ${others} change${others === 1 ? '' : 's'}`;
    this._scope.title = this._all
      ? 'Show only the changes made from this notebook (its kernel: your magics, the panel and its agents)'
      : "Show every change in this folder, other notebooks' and tools' too";
    this._scope.setAttribute('aria-pressed', String(this._all));
    this._body.replaceChildren(...groups.map(g => this._session(g)));
  }

  private _session(group: ISessionTimeline): HTMLElement {
    const section = document.createElement('section');
    section.className = 'kli-Timeline-session';
    section.dataset.session = group.session;
    section.dataset.label = group.label;
    if (group.notebook) {
      section.dataset.notebook = group.notebook;
    }
    const h = document.createElement('h4');
    const id = document.createElement('span');
    id.className = 'kli-Timeline-sessionId';
    id.textContent = `session ${group.session}`;
    id.title = `What undo takes as session=${group.session} (a label may name several sessions)`;
    h.append(group.title, ' ', id);
    const whole = wholeSession(group);
    const first = group.entries[0];
    if (whole.scope && first) {
      const scope = whole.scope;
      const all = button(
        whole.words,
        'kli-Timeline-undoSession',
        () => void this._undo(first.id, scope)
      );
      all.title = whole.title;
      all.disabled = this._busy;
      h.append(' ', all);
    }
    const list = document.createElement('ol');
    list.className = 'kli-Timeline-list';
    for (const entry of group.entries) {
      list.append(this._entry(group, entry));
    }
    section.append(h, list);
    return section;
  }

  private _entry(group: ISessionTimeline, entry: ITimelineEntry): HTMLElement {
    const li = document.createElement('li');
    li.className = 'kli-Timeline-entry';
    li.dataset.change = entry.id;
    li.dataset.tool = entry.tool;
    li.dataset.undone = String(!!entry.undoneBy);
    const line = document.createElement('div');
    line.className = 'kli-Timeline-line';
    const cells: [string, string][] = [
      ['kli-Timeline-time', entry.clock],
      ['kli-Timeline-tool', entry.tool],
      ['kli-Timeline-counts', entry.counts],
      ['kli-Timeline-state', entry.undoneBy ? 'undone' : '']
    ];
    for (const [cls, text] of cells) {
      const span = document.createElement('span');
      span.className = cls;
      span.textContent = text;
      line.append(span);
    }
    line.title = entry.id;
    li.append(line);
    const files = document.createElement('ul');
    files.className = 'kli-Timeline-files';
    for (const f of entry.files) {
      const item = document.createElement('li');
      item.dataset.kind = f.kind;
      const path = document.createElement('span');
      path.className = 'kli-Timeline-path';
      path.textContent = f.path;
      pathText(path);
      const what = document.createElement('span');
      what.className = 'kli-Timeline-fileCounts';
      what.textContent = [f.kind === 'modified' ? '' : f.kind, f.counts].filter(Boolean).join(' ');
      item.append(path, what);
      files.append(item);
    }
    li.append(files);
    if (entry.note) {
      const note = document.createElement('p');
      note.className = 'kli-Timeline-note';
      note.textContent = entry.note;
      li.append(note);
    }
    const actions = document.createElement('div');
    actions.className = 'kli-Timeline-actions';
    const one = entry.undoneBy
      ? button(
          'Redo',
          'kli-Timeline-redo',
          () => void this._undo(entry.id, undoScope(entry), 'Redo — ')
        )
      : button('Undo', 'kli-Timeline-undo', () => void this._undo(entry.id, undoScope(entry)));
    one.title = entry.undoneBy
      ? `Put this change back (undo ${entry.undoneBy}, the undo that took it back)`
      : `Take change ${entry.id} back`;
    const since = button(
      'Undo everything since here',
      'kli-Timeline-undoSince',
      () => void this._undo(entry.id, sinceScope(group, entry))
    );
    since.title = `Take back everything ${group.label} did since ${entry.clock} (what is undone already stays undone)`;
    actions.append(one, since);
    const outcome = this._outcomes.get(entry.id);
    if (outcome?.force) {
      const scope = outcome.force;
      const force = button(
        'Undo anyway',
        'kli-Timeline-undoForce jp-mod-warn',
        () => void this._undo(entry.id, scope)
      );
      force.title =
        'Put the old bytes back although the file changed since (what is there now is kept, so this too can be undone)';
      actions.append(force);
    }
    for (const b of actions.querySelectorAll('button')) {
      b.disabled = this._busy;
    }
    li.append(actions);
    if (outcome) {
      const p = document.createElement('p');
      p.className = 'kli-Timeline-outcome';
      p.dataset.ok = String(outcome.ok);
      p.setAttribute('role', 'status');
      p.textContent = outcome.text;
      li.append(p);
    }
    return li;
  }

  private _conn: UiConnection | null = null;
  private _key: string | null = null;
  private _changes: IChangeInfo[] = [];
  private _notebook: string | null = null;
  private _all = false;
  private _total = 0;
  private _error = '';
  private _loading = false;
  private _again = false;
  private _busy = false;
  private _outcomes = new Map<string, IOutcome>();
  private _status: HTMLParagraphElement;
  private _scope: HTMLButtonElement;
  private _body: HTMLDivElement;
}
