/**
 * The activity panel: every tool call of one kernel (agent or magic) as a live list; the one
 * queue of pending proposals — repair previews and agent calls held for review (approval
 * mode): their diff or command, Accept / Reject (with a note), Accept all / Reject all of the
 * session and file the filters choose, expired ones marked; the approval switch; filters by
 * session and by tool; a Timeline tab (widgets/timeline.ts): the recorded changes per session,
 * with Undo / Redo. It shows the kernel it is given (the plugin follows the current notebook).
 */
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { Kernel } from '@jupyterlab/services';
import { Panel, PanelLayout, Widget } from '@lumino/widgets';
import { UiConnection, connectionFor } from '../connection';
import {
  ICallStatus,
  callStatus,
  decisionsByProposal,
  listedEvents,
  statusWords as callWords,
  undoneChanges
} from '../model/callstate';
import { OPEN } from '../model/decision';
import { heldLead } from '../model/diff';
import { eventToRow } from '../model/summary';
import { rowThumbnails } from '../model/thumbnails';
import {
  IActivityState,
  IFilter,
  pendingPaths,
  toolsSeen,
  visibleEvents,
  visiblePending
} from '../model/store';
import { panelText } from '../protocol';
import type { ICandidate, IToolEvent } from '../protocol';
import { FileChangeView } from './fileview';
import { pathText } from './pathtext';
import { RepairControls, button } from './repair';
import { TimelineView } from './timeline';

/** Rows kept in the DOM; older ones stay in the model and reappear when filtered in. */
const MAX_ROWS = 300;

/** Pending items resolved from the panel that stay listed with their outcome. */
const KEEP_RESOLVED = 3;

/** What a decided proposal's row says of the decision, as a sentence. */
function decisionSentence(status: ICallStatus): string {
  if (!status.by) {
    return '';
  }
  const verb: Record<string, string> = {
    written: 'Accepted',
    ran: 'Accepted',
    undone: 'Accepted, then undone,',
    rejected: 'Rejected',
    refused: 'Accept refused',
    discarded: 'Discarded'
  };
  const head = `${verb[status.state] ?? status.state} by ${status.by}`;
  return status.note ? `${head}. Note for the agent: ${status.note}` : `${head}.`;
}

/** One tool call; expands to its result text and diffs; says what state the call is in (held,
 * written, rejected…), updated in place when its proposal is decided or its change undone. */
class EventRow extends Widget {
  constructor(
    readonly event: IToolEvent,
    private readonly _summaryArgs: readonly string[],
    private readonly _languages: IEditorLanguageRegistry | null,
    private readonly _lookup: () => UiConnection | null,
    status: ICallStatus
  ) {
    super({ node: document.createElement('li') });
    const row = eventToRow(event, _summaryArgs);
    this._status = status;
    this.addClass('kli-Row');
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
      ['kli-Row-ok', ''],
      ['kli-Row-duration', row.duration],
      ['kli-Row-session', row.sessionLabel]
    ];
    for (const [cls, text] of cells) {
      const span = document.createElement('span');
      span.className = cls;
      span.textContent = text;
      toggle.append(span);
    }
    pathText(toggle.querySelector('.kli-Row-summary'), row.summaryIsPaths);
    // What the agent looked at (look): a thumbnail of each image its model was handed.
    const thumbs = rowThumbnails(event);
    if (thumbs.length) {
      const looked = document.createElement('span');
      looked.className = 'kli-Row-looked';
      for (const thumb of thumbs) {
        const img = document.createElement('img');
        img.src = thumb.src;
        img.alt = img.title = thumb.title;
        looked.append(img);
      }
      toggle.querySelector('.kli-Row-summary')?.after(looked);
    }
    toggle.title = [row.time, row.source, row.summaryTitle || row.summary]
      .filter(Boolean)
      .join(' · ');
    toggle.addEventListener('click', () => this.setExpanded(!this._body));
    this._toggle = toggle;
    this._state = toggle.querySelector('.kli-Row-ok') as HTMLSpanElement;
    const layout = (this.layout = new PanelLayout());
    layout.addWidget(new Widget({ node: toggle }));
    this._showStatus();
  }

  /** The call's state now; the row changes in place (an open body is rebuilt). */
  setStatus(status: ICallStatus): void {
    const old = this._status;
    if (
      old.state === status.state &&
      old.by === status.by &&
      old.note === status.note &&
      old.change === status.change
    ) {
      return;
    }
    this._status = status;
    this._showStatus();
    // An open body keeps what the person did in it (an Undo's outcome, its Redo).
    if (this._decision) {
      this._decision.textContent = decisionSentence(status);
      this._decision.hidden = !this._decision.textContent;
    }
    if (this._body && !this._undoBar) {
      this._addUndo(this._body);
    }
  }

  private _showStatus(): void {
    const status = this._status;
    const bad = status.state === 'error' || status.state === 'refused';
    this.node.dataset.ok = String(!bad);
    this.node.dataset.state = status.state;
    this.node.dataset.by = status.by;
    this._state.textContent = callWords(status);
    this._state.title = decisionSentence(status);
  }

  setExpanded(open: boolean): void {
    this._toggle.setAttribute('aria-expanded', String(open));
    if (!open) {
      this._body?.dispose();
      this._body = null;
      this._decision = null;
      this._undoBar = null;
      return;
    }
    if (this._body) {
      return;
    }
    const body = new Panel();
    body.addClass('kli-Row-body');
    const row = eventToRow(this.event, this._summaryArgs);
    const decision = new Widget({ node: document.createElement('p') });
    decision.addClass('kli-Row-decision');
    decision.node.textContent = decisionSentence(this._status);
    decision.node.hidden = !decision.node.textContent;
    this._decision = decision.node;
    body.addWidget(decision);
    if (this._status.state === 'refused' && this._status.text) {
      const why = new Widget({ node: document.createElement('pre') });
      why.addClass('kli-Row-text');
      why.node.textContent = this._status.text;
      body.addWidget(why);
    }
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
    this._addUndo(body);
    this._body = body;
    (this.layout as PanelLayout).addWidget(body);
  }

  /** The Undo of the change this call wrote, or the Accept of its proposal wrote. */
  private _addUndo(body: Panel): void {
    // (a proposal has one once an Accept wrote it; any other call when it changed files)
    const change = this._status.change;
    if (change) {
      this._undoBar = this._undoControls(change);
      body.addWidget(this._undoBar);
    }
  }

  /** Undo this change, or everything its session did since it; a refusal (a file changed
   * since) offers "Undo anyway", which is the person's confirmation (`force`); a done undo
   * offers "Redo" (the undo of that undo). */
  private _undoControls(change: string): Widget {
    const bar = new Widget({ node: document.createElement('div') });
    bar.addClass('kli-Row-undo');
    const outcome = document.createElement('p');
    outcome.className = 'kli-Row-undoOutcome';
    outcome.setAttribute('role', 'status');
    const who = this.event.session_label || this.event.session || '';
    const since = String(this.event.time ?? '');
    const at = this.event.time ? new Date(this.event.time * 1000).toLocaleTimeString() : '';
    let force: HTMLButtonElement | null = null;
    const run = async (scope: {
      change?: string;
      session?: string;
      since?: string;
      force?: boolean;
    }): Promise<void> => {
      const conn = this._lookup();
      if (!conn) {
        outcome.textContent = 'Not connected to the kernel.';
        return;
      }
      const reply = await conn.undo(scope);
      outcome.textContent = panelText(reply);
      force?.remove();
      force = null;
      const undone = reply.op === 'result' && reply.ok ? reply.details?.change : undefined;
      if (typeof undone === 'string') {
        // The undo is itself a change: undoing it is the redo.
        force = button('Redo', 'kli-Row-redo', () => void run({ change: undone }));
        bar.node.insertBefore(force, outcome);
      } else if (reply.op === 'result' && !reply.ok && reply.details?.error === 'changed') {
        force = button(
          'Undo anyway',
          'kli-Row-undoForce',
          () => void run({ ...scope, force: true })
        );
        bar.node.insertBefore(force, outcome);
      }
    };
    bar.node.append(
      button('Undo this change', 'kli-Row-undoOne', () => void run({ change })),
      button(
        `Undo everything ${who} did since ${at}`,
        'kli-Row-undoSince',
        () => void run({ session: this.event.session || who, since })
      ),
      outcome
    );
    return bar;
  }

  private _toggle: HTMLButtonElement;
  private _state: HTMLSpanElement;
  private _status: ICallStatus;
  private _body: Panel | null = null;
  private _decision: HTMLElement | null = null;
  private _undoBar: Widget | null = null;
}

/** The kinds of action approval mode holds, as the switch names them. */
export const APPROVAL_KINDS: [string, string, string][] = [
  ['file', 'files', 'changes to files'],
  ['shell', 'shell', 'shell commands'],
  ['eval', 'eval', 'Python evaluations']
];

/**
 * One pending proposal: a repair preview or a held file call (its diffs, the exact texts
 * Accept writes), or a held shell / eval call (the command Accept runs); then the controls.
 */
class PendingItem extends Widget {
  constructor(
    readonly candidate: ICandidate,
    languages: IEditorLanguageRegistry | null,
    lookup: () => UiConnection | null
  ) {
    super({ node: document.createElement('li') });
    this.addClass('kli-Pending-item');
    this.node.dataset.candidate = candidate.candidate;
    this.node.dataset.kind = candidate.kind ?? 'repair';
    const layout = (this.layout = new PanelLayout());
    const who = candidate.session_label || candidate.session;
    const head = new Widget();
    head.addClass('kli-Pending-session');
    const tool = candidate.tool ? `${candidate.tool} · ` : '';
    head.node.textContent = `${tool}${candidate.candidate}${who ? ` from ${who}` : ''}`;
    layout.addWidget(head);
    this._expired = new Widget();
    this._expired.addClass('kli-Pending-expired');
    layout.addWidget(this._expired);
    this.setExpired(candidate.expired ?? '');
    if (candidate.steps?.length) {
      // What Accept does besides writing the texts below: folders, moves, git mv.
      const steps = new Widget({ node: document.createElement('ul') });
      steps.addClass('kli-Pending-steps');
      steps.node.setAttribute('aria-label', 'Steps Accept takes');
      for (const step of candidate.steps) {
        const li = document.createElement('li');
        li.textContent = step;
        steps.node.append(li);
      }
      layout.addWidget(steps);
    }
    if (typeof candidate.command === 'string') {
      const pre = new Widget({ node: document.createElement('pre') });
      pre.addClass('kli-Pending-command');
      pre.node.dataset.action = candidate.action ?? '';
      pre.node.textContent = candidate.command;
      layout.addWidget(pre);
      this._controls = new RepairControls(
        { candidate: candidate.candidate, path: candidate.path, after: null, runs: true },
        heldLead('Accept runs it, Reject does not'),
        lookup
      );
      layout.addWidget(this._controls);
      return;
    }
    const files = candidate.files?.length
      ? candidate.files
      : [
          candidate.file ?? {
            path: candidate.path,
            status: 'preview',
            candidate: candidate.candidate,
            reason: candidate.reason,
            message: candidate.message
          }
        ];
    files.forEach((file, i) => {
      // One set of controls per proposal: on the first file's view.
      const view = new FileChangeView(
        { ...file, status: 'preview', candidate: i === 0 ? candidate.candidate : null },
        { languages, lookup: i === 0 ? lookup : undefined }
      );
      if (i === 0) {
        this._controls = view.repair;
      }
      layout.addWidget(view);
    });
  }

  /** Mark the proposal expired (its agent disconnected): it can still be decided. */
  setExpired(text: string): void {
    this._expired.node.textContent = text;
    this._expired.setHidden(!text);
    this.node.dataset.expired = String(!!text);
  }

  get controls(): RepairControls | null {
    return this._controls;
  }

  private _controls: RepairControls | null = null;
  private _expired: Widget;
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

    const switches = document.createElement('div');
    switches.className = 'kli-Approval';
    switches.append('Review before running: ');
    for (const [kind, label, what] of APPROVAL_KINDS) {
      const wrap = document.createElement('label');
      wrap.className = 'kli-Approval-kind';
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.className = `kli-Approval-${kind}`;
      box.dataset.kind = kind;
      box.title = `Hold each of an agent's ${what} until you accept or reject it`;
      box.addEventListener('change', () => void this.setReview(kind, box.checked));
      wrap.append(box, ` ${label}`);
      switches.append(wrap);
      this._approval.set(kind, box);
    }
    head.append(switches);
    // Whether the choice lasts: kept in a settings file, or this kernel only (said plainly).
    const keeping = document.createElement('div');
    keeping.className = 'kli-Approval-keeping';
    const keepWrap = document.createElement('label');
    keepWrap.className = 'kli-Approval-keepLabel';
    this._keep = document.createElement('input');
    this._keep.type = 'checkbox';
    this._keep.className = 'kli-Approval-keep';
    this._keep.title =
      "Keep this choice in the project's settings file (.kli/settings.json), so a restarted " +
      'kernel and new notebooks start with it; unchecked, it lasts for this kernel only';
    this._keep.addEventListener('change', () => void this.setKeep(this._keep.checked));
    keepWrap.append(this._keep, ' Keep');
    this._origin = document.createElement('span');
    this._origin.className = 'kli-Approval-origin';
    this._origin.setAttribute('role', 'status');
    keeping.append(keepWrap, this._origin);
    head.append(keeping);
    // The box (docs/sandbox.md): switched where review is, its state and limits said plainly.
    const boxRow = document.createElement('div');
    boxRow.className = 'kli-Box';
    const boxWrap = document.createElement('label');
    boxWrap.className = 'kli-Box-label';
    this._boxOn = document.createElement('input');
    this._boxOn.type = 'checkbox';
    this._boxOn.className = 'kli-Box-on';
    this._boxOn.title =
      "Run the agent's shell commands and Python in a sandbox (bubblewrap): writes only in " +
      'the workspace root, no network, no new privileges; kept in .kli/settings.json';
    this._boxOn.addEventListener('change', () => void this.setBox(this._boxOn.checked));
    boxWrap.append(this._boxOn, ' Box');
    const netWrap = document.createElement('label');
    netWrap.className = 'kli-Box-networkLabel';
    this._boxNet = document.createElement('input');
    this._boxNet.type = 'checkbox';
    this._boxNet.className = 'kli-Box-network';
    this._boxNet.title =
      'Let the box reach the network (all of it: named hosts cannot be enforced with ' +
      'bubblewrap alone)';
    this._boxNet.addEventListener('change', () => void this.setBoxNetwork(this._boxNet.checked));
    netWrap.append(this._boxNet, ' network');
    this._boxSaid = document.createElement('span');
    this._boxSaid.className = 'kli-Box-said';
    this._boxSaid.setAttribute('role', 'status');
    this._boxLimits = document.createElement('details');
    this._boxLimits.className = 'kli-Box-limits';
    boxRow.append(boxWrap, netWrap, this._boxSaid, this._boxLimits);
    head.append(boxRow);

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
    this._pathSelect = select('File', 'kli-Filter-path', () => this._onFilter());
    pendingHead.append(
      this._pendingTitle,
      this._pathSelect.parentElement!,
      this._acceptAll,
      this._rejectAll
    );
    this._bulkOutcome = document.createElement('p');
    this._bulkOutcome.className = 'kli-Pending-outcome';
    this._bulkOutcome.setAttribute('role', 'status');
    pendingHead.append(this._bulkOutcome);
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

    // Two views under the queue: the tool calls, or the undo timeline.
    const tabs = document.createElement('div');
    tabs.className = 'kli-Activity-tabs';
    tabs.setAttribute('role', 'tablist');
    this._filters = new Widget({ node: filters });
    this._calls = calls;
    this._timeline = new TimelineView();
    for (const [view, label] of [
      ['calls', 'Tool calls'],
      ['timeline', 'Timeline']
    ] as const) {
      const tab = button(label, `kli-Activity-tab kli-Activity-tab-${view}`, () =>
        this._showView(view)
      );
      tab.setAttribute('role', 'tab');
      tabs.append(tab);
      this._tabs.set(view, tab);
    }

    const layout = (this.layout = new PanelLayout());
    layout.addWidget(new Widget({ node: head }));
    layout.addWidget(new Widget({ node: tabs }));
    layout.addWidget(this._filters);
    layout.addWidget(this._pendingSection);
    layout.addWidget(calls);
    layout.addWidget(this._timeline);
    this._showView('calls');
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

  /** Whether the kernel's approval modes are known (a kli kernel answered). */
  get approvalReady(): boolean {
    return !!this._conn?.state.ready && Object.keys(this._conn.state.approval).length > 0;
  }

  /** Whether an agent's calls of `kind` (every kind when null) wait for review. */
  reviewing(kind: string | null): boolean {
    const modes = this._conn?.state.approval ?? {};
    const kinds = kind ? [kind] : APPROVAL_KINDS.map(([k]) => k);
    return this.approvalReady && kinds.every(k => modes[k] === 'review');
  }

  /** Whether the approval choice is kept in a settings file. */
  get kept(): boolean {
    return this._conn?.state.approvalOrigin.origin === 'kept';
  }

  /** Switch review for `kind` (null: every kind), where the choice is kept now. */
  async setReview(kind: string | null, on: boolean): Promise<void> {
    this._said(await this._conn?.setApproval(on ? 'review' : 'auto', kind ?? undefined));
  }

  /** Keep the approval choice in a settings file (true) or for this kernel only (false). */
  async setKeep(keep: boolean): Promise<void> {
    this._said(await this._conn?.setApproval(null, undefined, keep));
  }

  /** Whether the box is on (the setting, or this kernel runs in it). */
  get boxOn(): boolean {
    const box = this._conn?.state.box;
    return !!box && (box.mode === 'on' || box.state === 'kernel');
  }

  /** Whether the box can be switched here (a kli kernel said it; not one already in the box). */
  get boxSwitchable(): boolean {
    const box = this._conn?.state.box;
    return !!this._conn?.state.ready && !!box && box.state !== 'kernel';
  }

  /** Switch the box on or off (docs/sandbox.md), kept in the project's settings. */
  async setBox(on: boolean): Promise<void> {
    this._said(await this._conn?.setSandbox(on ? 'on' : 'off'));
  }

  /** Allow the box the network (all of it) or none. */
  async setBoxNetwork(on: boolean): Promise<void> {
    this._said(await this._conn?.setSandbox(null, on ? 'all' : 'off'));
  }

  /** Show the Timeline view (the panel itself is shown by the caller). */
  showTimeline(): void {
    this._showView('timeline');
  }

  /** A keep the kernel could not write: say why, until the next answer. */
  private _said(reply: { op: string; problem?: string; text?: string } | undefined): void {
    this._problem =
      reply?.op === 'approval' || reply?.op === 'sandbox'
        ? (reply.problem ?? '')
        : (reply?.text ?? '');
    this._render();
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

  private _showView(view: 'calls' | 'timeline'): void {
    for (const [v, tab] of this._tabs) {
      tab.setAttribute('aria-selected', String(v === view));
    }
    this._filters.setHidden(view !== 'calls');
    this._calls.setHidden(view !== 'calls');
    this._timeline.setHidden(view !== 'timeline');
    this._timeline.setConnection(this._conn);
  }

  private _onFilter(): void {
    this._filter = {
      session: this._sessionSelect.value,
      tool: this._toolSelect.value,
      path: this._pathSelect.value
    };
    this._render();
  }

  /** Accept all / Reject all: every pending proposal of the chosen session and file, decided
   * by the kernel in one `bulk` request (each item then learns its own outcome). */
  private async _bulk(action: 'accept' | 'reject'): Promise<void> {
    const conn = this._conn;
    if (!conn) {
      return;
    }
    this._acceptAll.disabled = this._rejectAll.disabled = true;
    // The items the kernel will decide show as sending (and stay listed with their outcome).
    const items = [...this._pending.values()].filter(
      i => i.controls && i.controls.decision.state === 'open' && i.node.isConnected
    );
    for (const item of items) {
      item.controls!.apply({ state: 'busy', text: '', by: 'ui' });
    }
    const reply = await conn.bulk(action, {
      session: this._filter.session,
      path: this._filter.path
    });
    for (const item of items) {
      if (item.controls!.decision.state === 'busy') {
        // Not decided (an Accept that failed, or no longer pending): open again.
        item.controls!.apply(OPEN);
      }
    }
    this._bulkOutcome.textContent = reply.text ?? '';
    this._render();
  }

  private _lookup = (): UiConnection | null => this._conn;

  private _render(): void {
    const conn = this._conn;
    const state: IActivityState | null = conn ? conn.state : null;
    this._where.textContent = conn
      ? `${this._whereText} · ${statusWords(conn)}`
      : this._whereText || 'Open a notebook with a kli kernel.';
    this._renderFilters(state);
    this._renderApproval(state);
    this._renderBox(state);
    this._renderPending(state);
    this._renderRows(state);
    this._timeline.setConnection(conn);
    const count = state ? state.pending.length : 0;
    this.title.dataset = count ? { 'kli-pending': String(count) } : {};
    this.title.label = '';
    this.title.caption = count
      ? `kli activity — ${count} pending proposal${count === 1 ? '' : 's'}`
      : 'kli activity';
  }

  private _renderFilters(state: IActivityState | null): void {
    const sessions = state ? state.sessions.map(s => [s.id, s.label || s.id]) : [];
    const tools = state ? toolsSeen(state).map(t => [t, t]) : [];
    fill(this._sessionSelect, 'All sessions', sessions);
    fill(this._toolSelect, 'All tools', tools);
    const paths = state ? pendingPaths(state).map(p => [p, p]) : [];
    fill(this._pathSelect, 'All files', paths);
    this._filter = {
      session: this._sessionSelect.value,
      tool: this._toolSelect.value,
      path: this._pathSelect.value
    };
  }

  private _renderApproval(state: IActivityState | null): void {
    for (const [kind, box] of this._approval) {
      box.checked = state?.approval[kind] === 'review';
      box.disabled = !state?.ready || !(kind in (state?.approval ?? {}));
    }
    const origin = state?.approvalOrigin;
    this._keep.checked = origin?.origin === 'kept';
    // An older kernel does not say where its modes come from, nor keeps them.
    this._keep.disabled = !state?.ready || !origin?.origin;
    this._origin.textContent = [origin?.said ?? '', this._problem].filter(Boolean).join(' — ');
    this._origin.dataset.origin = origin?.origin ?? '';
    this._origin.title = origin?.kept ?? '';
    this.approvalChanged?.();
  }

  /** The box's switch, its state in the kernel's words (a box not made says so, in the
   * error colour), and what it stops and does not (folded). */
  private _renderBox(state: IActivityState | null): void {
    const box = state?.box ?? null;
    this._boxOn.checked = this.boxOn;
    this._boxOn.disabled = !this.boxSwitchable;
    this._boxNet.checked = box?.network === 'all';
    this._boxNet.disabled = !state?.ready || !box || box.state === 'kernel';
    this._boxSaid.textContent = box ? `${box.said}${box.problem ? ` — ${box.problem}` : ''}` : '';
    this._boxSaid.dataset.state = box?.state ?? '';
    this._boxLimits.replaceChildren();
    if (!box) {
      return;
    }
    const summary = document.createElement('summary');
    summary.textContent = 'What the box stops, and what it does not';
    const list = (title: string, items: string[], cls: string): HTMLElement => {
      const ul = document.createElement('ul');
      ul.className = cls;
      ul.setAttribute('aria-label', title);
      for (const item of items) {
        const li = document.createElement('li');
        li.textContent = item;
        ul.append(li);
      }
      return ul;
    };
    const stops = document.createElement('div');
    stops.textContent = 'Stops:';
    const not = document.createElement('div');
    not.textContent = 'Does not stop:';
    this._boxLimits.append(
      summary,
      stops,
      list('stops', box.stops, 'kli-Box-stops'),
      not,
      list('does not stop', box.does_not_stop, 'kli-Box-doesNotStop')
    );
  }

  /** Called after the approval switches are drawn (the palette's toggles follow them). */
  approvalChanged: (() => void) | null = null;

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
      const item = this._pending.get(c.candidate);
      if (!item) {
        this._pending.set(c.candidate, new PendingItem(c, this._languages, this._lookup));
      } else {
        item.setExpired(c.expired ?? '');
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
    this._pendingTitle.textContent = `Pending (${open})`;
    this._pendingSection.setHidden(this._pending.size === 0);
    this._acceptAll.disabled = open === 0;
    this._rejectAll.disabled = open === 0;
  }

  private _renderRows(state: IActivityState | null): void {
    // A person's decision is shown on the row of the proposal it decided.
    const listed = new Set(state ? listedEvents(state.events) : []);
    const events = state
      ? visibleEvents(state, this._filter)
          .filter(e => listed.has(e))
          .slice(0, MAX_ROWS)
      : [];
    const undone = undoneChanges(state?.events ?? []);
    const decisions = decisionsByProposal(state?.events ?? []);
    const keep = new Set(events.map(e => e.id));
    for (const [id, row] of this._rows) {
      if (!keep.has(id)) {
        row.dispose();
        this._rows.delete(id);
      }
    }
    const list = this._list.layout as PanelLayout;
    events.forEach((e, i) => {
      const status = callStatus(state!, e, undone, decisions);
      let row = this._rows.get(e.id);
      if (!row) {
        row = new EventRow(
          e,
          state?.summaryArgs[e.tool] ?? [],
          this._languages,
          this._lookup,
          status
        );
        this._rows.set(e.id, row);
      } else {
        row.setStatus(status);
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
  private _tabs = new Map<'calls' | 'timeline', HTMLButtonElement>();
  private _filters: Widget;
  private _calls: Widget;
  private _timeline: TimelineView;
  private _whereText = '';
  private _filter: IFilter = { session: '', tool: '', path: '' };
  private _approval = new Map<string, HTMLInputElement>();
  private _boxOn!: HTMLInputElement;
  private _boxNet!: HTMLInputElement;
  private _boxSaid!: HTMLSpanElement;
  private _boxLimits!: HTMLDetailsElement;
  private _keep: HTMLInputElement;
  private _origin: HTMLSpanElement;
  private _problem = '';
  private _pathSelect: HTMLSelectElement;
  private _bulkOutcome: HTMLParagraphElement;
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
