/**
 * The activity panel: every tool call of one kernel (agent or magic) as a live list, pending
 * repair previews with Accept / Reject and Accept all / Reject all, filters by session and by
 * tool. It shows the kernel it is given (the plugin follows the current notebook).
 */
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { Kernel } from '@jupyterlab/services';
import { Panel, PanelLayout, Widget } from '@lumino/widgets';
import { UiConnection, connectionFor } from '../connection';
import { eventToRow } from '../model/summary';
import { IActivityState, IFilter, toolsSeen, visibleEvents, visiblePending } from '../model/store';
import type { ICandidate, IToolEvent } from '../protocol';
import { FileChangeView } from './fileview';
import { RepairControls, button } from './repair';

/** Rows kept in the DOM; older ones stay in the model and reappear when filtered in. */
const MAX_ROWS = 300;

/** Pending items resolved from the panel that stay listed with their outcome. */
const KEEP_RESOLVED = 3;

/** One tool call; expands to its result text and diffs. */
class EventRow extends Widget {
  constructor(
    readonly event: IToolEvent,
    private readonly _summaryArgs: readonly string[],
    private readonly _languages: IEditorLanguageRegistry | null,
    private readonly _lookup: () => UiConnection | null
  ) {
    super({ node: document.createElement('li') });
    const row = eventToRow(event, _summaryArgs);
    this.addClass('kli-Row');
    this.node.dataset.ok = String(row.ok);
    this.node.dataset.tool = row.tool;
    this.node.dataset.id = row.id;
    const toggle = document.createElement('button');
    toggle.type = 'button';
    toggle.className = 'kli-Row-toggle';
    toggle.setAttribute('aria-expanded', 'false');
    const cells: [string, string][] = [
      ['kli-Row-tool', row.tool],
      ['kli-Row-summary', row.summary],
      ['kli-Row-counts', row.counts],
      ['kli-Row-ok', row.okText],
      ['kli-Row-duration', row.duration],
      ['kli-Row-session', row.sessionLabel]
    ];
    for (const [cls, text] of cells) {
      const span = document.createElement('span');
      span.className = cls;
      span.textContent = text;
      toggle.append(span);
    }
    toggle.title = [row.time, row.source, row.summary].filter(Boolean).join(' · ');
    toggle.addEventListener('click', () => this.setExpanded(!this._body));
    this._toggle = toggle;
    const layout = (this.layout = new PanelLayout());
    layout.addWidget(new Widget({ node: toggle }));
  }

  setExpanded(open: boolean): void {
    this._toggle.setAttribute('aria-expanded', String(open));
    if (!open) {
      this._body?.dispose();
      this._body = null;
      return;
    }
    if (this._body) {
      return;
    }
    const body = new Panel();
    body.addClass('kli-Row-body');
    const row = eventToRow(this.event, this._summaryArgs);
    if (row.text) {
      const pre = new Widget({ node: document.createElement('pre') });
      pre.addClass('kli-Row-text');
      pre.node.textContent = row.text;
      body.addWidget(pre);
    }
    for (const file of row.files) {
      body.addWidget(
        new FileChangeView(file, {
          languages: this._languages,
          lookup: this._lookup
        })
      );
    }
    this._body = body;
    (this.layout as PanelLayout).addWidget(body);
  }

  private _toggle: HTMLButtonElement;
  private _body: Panel | null = null;
}

/** One pending repair preview: its diff when the kernel sent the file, and the controls. */
class PendingItem extends Widget {
  constructor(
    readonly candidate: ICandidate,
    languages: IEditorLanguageRegistry | null,
    lookup: () => UiConnection | null
  ) {
    super({ node: document.createElement('li') });
    this.addClass('kli-Pending-item');
    this.node.dataset.candidate = candidate.candidate;
    const layout = (this.layout = new PanelLayout());
    const file = candidate.file ?? {
      path: candidate.path,
      status: 'preview',
      candidate: candidate.candidate,
      reason: candidate.reason,
      message: candidate.message
    };
    const who = candidate.session_label || candidate.session;
    if (who) {
      const by = new Widget();
      by.addClass('kli-Pending-session');
      by.node.textContent = `from ${who}`;
      layout.addWidget(by);
    }
    this.view = new FileChangeView(
      { ...file, status: 'preview', candidate: candidate.candidate },
      { languages, lookup }
    );
    layout.addWidget(this.view);
  }

  readonly view: FileChangeView;

  get controls(): RepairControls | null {
    return this.view.repair;
  }
}

export class ActivityPanel extends Widget {
  constructor(private readonly _languages: IEditorLanguageRegistry | null) {
    super();
    this.addClass('kli-Activity');
    this.id = 'kli-activity';
    this.title.caption = 'kli activity';
    this.title.className = 'kli-ActivityTab';
    this.node.tabIndex = -1;

    const head = document.createElement('div');
    head.className = 'kli-Activity-head';
    const title = document.createElement('h2');
    title.className = 'kli-Activity-title';
    title.textContent = 'kli activity';
    this._where = document.createElement('div');
    this._where.className = 'kli-Activity-where';
    head.append(title, this._where);

    const filters = document.createElement('div');
    filters.className = 'kli-Activity-filters';
    this._sessionSelect = select('Session', 'kli-Filter-session', () => this._onFilter());
    this._toolSelect = select('Tool', 'kli-Filter-tool', () => this._onFilter());
    filters.append(this._sessionSelect.parentElement!, this._toolSelect.parentElement!);

    const pendingHead = document.createElement('div');
    pendingHead.className = 'kli-Pending-head';
    this._pendingTitle = document.createElement('h3');
    this._acceptAll = button('Accept all', 'kli-Pending-acceptAll jp-mod-accept', () =>
      this._bulk('accept')
    );
    this._rejectAll = button('Reject all', 'kli-Pending-rejectAll jp-mod-reject', () =>
      this._bulk('reject')
    );
    pendingHead.append(this._pendingTitle, this._acceptAll, this._rejectAll);
    this._pendingList = container('ul', 'kli-Pending-list');
    this._pendingSection = container('section', 'kli-Pending');
    (this._pendingSection.layout as PanelLayout).addWidget(new Widget({ node: pendingHead }));
    (this._pendingSection.layout as PanelLayout).addWidget(this._pendingList);

    const calls = container('section', 'kli-Calls');
    const callsTitle = document.createElement('h3');
    callsTitle.textContent = 'Tool calls';
    this._empty = document.createElement('p');
    this._empty.className = 'kli-Calls-empty';
    (calls.layout as PanelLayout).addWidget(new Widget({ node: callsTitle }));
    (calls.layout as PanelLayout).addWidget(new Widget({ node: this._empty }));
    this._list = container('ul', 'kli-Calls-list');
    this._list.node.setAttribute('aria-live', 'polite');
    (calls.layout as PanelLayout).addWidget(this._list);

    const layout = (this.layout = new PanelLayout());
    layout.addWidget(new Widget({ node: head }));
    layout.addWidget(new Widget({ node: filters }));
    layout.addWidget(this._pendingSection);
    layout.addWidget(calls);
    this._render();
  }

  /** The kernel whose activity to show (null: no notebook / no kernel). */
  setKernel(kernel: Kernel.IKernelConnection | null, where: string): void {
    this._whereText = where;
    const conn = kernel ? connectionFor(kernel) : null;
    if (conn !== this._conn) {
      this._conn?.changed.disconnect(this._onChanged, this);
      this._conn = conn;
      this._clearRows();
      conn?.changed.connect(this._onChanged, this);
      if (conn && this.isVisible) {
        conn.ensureOpen();
      }
    }
    this._render();
  }

  get connection(): UiConnection | null {
    return this._conn;
  }

  dispose(): void {
    this._conn?.changed.disconnect(this._onChanged, this);
    this._clearRows();
    super.dispose();
  }

  protected onAfterShow(): void {
    // Opening the panel (late) opens the comm; the kernel's hello replays recent events.
    this._conn?.ensureOpen();
    this._render();
  }

  private _onChanged(): void {
    this._render();
  }

  private _onFilter(): void {
    this._filter = {
      session: this._sessionSelect.value,
      tool: this._toolSelect.value
    };
    this._render();
  }

  private async _bulk(action: 'accept' | 'reject'): Promise<void> {
    const items = [...this._pending.values()].filter(
      i => i.controls && i.controls.decision.state === 'open' && i.node.isConnected
    );
    for (const item of items) {
      await item.controls!.decide(action);
    }
  }

  private _lookup = (): UiConnection | null => this._conn;

  private _render(): void {
    const conn = this._conn;
    const state: IActivityState | null = conn ? conn.state : null;
    this._where.textContent = conn
      ? `${this._whereText} · ${statusWords(conn)}`
      : this._whereText || 'Open a notebook with a kli kernel.';
    this._renderFilters(state);
    this._renderPending(state);
    this._renderRows(state);
    const count = state ? state.pending.length : 0;
    this.title.dataset = count ? { 'kli-pending': String(count) } : {};
    this.title.label = '';
    this.title.caption = count
      ? `kli activity — ${count} pending repair preview${count === 1 ? '' : 's'}`
      : 'kli activity';
  }

  private _renderFilters(state: IActivityState | null): void {
    const sessions = state ? state.sessions.map(s => [s.id, s.label || s.id]) : [];
    const tools = state ? toolsSeen(state).map(t => [t, t]) : [];
    fill(this._sessionSelect, 'All sessions', sessions);
    fill(this._toolSelect, 'All tools', tools);
    this._filter = {
      session: this._sessionSelect.value,
      tool: this._toolSelect.value
    };
  }

  private _renderPending(state: IActivityState | null): void {
    const pending = state ? visiblePending(state, this._filter) : [];
    const keep = new Set(pending.map(c => c.candidate));
    // The last few items resolved from here stay, folded to their outcome (see base.css).
    let decided = 0;
    for (const [id, item] of [...this._pending].reverse()) {
      const state = item.controls?.decision.state ?? 'open';
      const shown = state !== 'open' && ++decided <= KEEP_RESOLVED;
      if (!keep.has(id) && !shown) {
        item.dispose();
        this._pending.delete(id);
      }
    }
    for (const c of pending) {
      if (!this._pending.has(c.candidate)) {
        this._pending.set(c.candidate, new PendingItem(c, this._languages, this._lookup));
      }
    }
    const list = this._pendingList.layout as PanelLayout;
    let i = 0;
    for (const item of this._pending.values()) {
      if (list.widgets[i] !== item) {
        list.insertWidget(i, item);
      }
      i++;
    }
    const open = pending.length;
    this._pendingTitle.textContent = `Pending repair previews (${open})`;
    this._pendingSection.setHidden(this._pending.size === 0);
    this._acceptAll.disabled = open === 0;
    this._rejectAll.disabled = open === 0;
  }

  private _renderRows(state: IActivityState | null): void {
    const events = state ? visibleEvents(state, this._filter).slice(0, MAX_ROWS) : [];
    const keep = new Set(events.map(e => e.id));
    for (const [id, row] of this._rows) {
      if (!keep.has(id)) {
        row.dispose();
        this._rows.delete(id);
      }
    }
    const list = this._list.layout as PanelLayout;
    events.forEach((e, i) => {
      let row = this._rows.get(e.id);
      if (!row) {
        row = new EventRow(e, state?.summaryArgs[e.tool] ?? [], this._languages, this._lookup);
        this._rows.set(e.id, row);
      }
      if (list.widgets[i] !== row) {
        list.insertWidget(i, row);
      }
    });
    this._empty.textContent = !this._conn
      ? ''
      : events.length
        ? ''
        : state && state.events.length
          ? 'No call matches the filters.'
          : 'No tool calls yet.';
    this._empty.hidden = !this._empty.textContent;
  }

  private _clearRows(): void {
    for (const row of this._rows.values()) {
      row.dispose();
    }
    this._rows.clear();
    for (const item of this._pending.values()) {
      item.dispose();
    }
    this._pending.clear();
  }

  private _conn: UiConnection | null = null;
  private _whereText = '';
  private _filter: IFilter = { session: '', tool: '' };
  private _rows = new Map<string, EventRow>();
  private _pending = new Map<string, PendingItem>();
  private _where: HTMLDivElement;
  private _sessionSelect: HTMLSelectElement;
  private _toolSelect: HTMLSelectElement;
  private _pendingSection: Widget;
  private _pendingTitle: HTMLHeadingElement;
  private _pendingList: Widget;
  private _acceptAll: HTMLButtonElement;
  private _rejectAll: HTMLButtonElement;
  private _empty: HTMLParagraphElement;
  private _list: Widget;
}

/** A widget whose children are laid out by a PanelLayout, on an element of `tag`. */
function container(tag: string, className: string): Widget {
  const w = new Widget({ node: document.createElement(tag) });
  w.addClass(className);
  w.layout = new PanelLayout();
  return w;
}

function statusWords(conn: UiConnection): string {
  switch (conn.status) {
    case 'open':
      return 'live';
    case 'opening':
      return 'connecting…';
    case 'closed':
      return 'not connected';
    default:
      return 'not connected';
  }
}

function select(label: string, className: string, onChange: () => void): HTMLSelectElement {
  const wrap = document.createElement('label');
  wrap.className = 'kli-Filter';
  wrap.append(`${label} `);
  const s = document.createElement('select');
  s.className = `jp-mod-styled ${className}`;
  s.addEventListener('change', onChange);
  wrap.append(s);
  return s;
}

/** Set a select's options, keeping the chosen value when it is still offered. */
function fill(s: HTMLSelectElement, all: string, options: string[][]): void {
  const value = s.value;
  const wanted = [['', all], ...options];
  const same =
    s.options.length === wanted.length &&
    wanted.every(([v, t], i) => s.options[i].value === v && s.options[i].text === t);
  if (!same) {
    s.replaceChildren(...wanted.map(([v, t]) => new Option(t, v)));
  }
  s.value = wanted.some(([v]) => v === value) ? value : '';
}
