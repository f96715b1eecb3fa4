/**
 * Accept / Reject for one pending proposal (a repair preview, or an agent's call held for
 * review): says what it is (`lead`: model/diff.ts proposalLead, heldLead), sends the
 * decision through the kernel's `kli.ui` comm, and shows the outcome (also when someone else
 * resolved it: the kernel's `resolved` message).
 */
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import { UiConnection, isKliKernel } from '../connection';
import {
  IDecision,
  OPEN,
  buttonsEnabled,
  decisionText,
  fromReply,
  IPreviewIdentity,
  fromResolved,
  matchPending,
  merge
} from '../model/decision';
import type { IResolvedMsg } from '../protocol';

/** Finds the connection to the kernel that made a preview (null when none is reachable). */
export type ConnectionLookup = () => UiConnection | null;

export class RepairControls extends Widget {
  constructor(
    readonly preview: IPreviewIdentity,
    lead: string,
    private readonly _lookup: ConnectionLookup
  ) {
    super();
    this.candidate = preview.candidate;
    this.addClass('kli-Repair');
    this.node.dataset.candidate = preview.candidate;
    const reason = document.createElement('p');
    reason.className = 'kli-Repair-reason';
    reason.textContent = lead;
    const buttons = document.createElement('div');
    buttons.className = 'kli-Repair-buttons';
    this._accept = button('Accept', 'kli-Repair-accept jp-mod-accept', () => this.decide('accept'));
    this._reject = button('Reject', 'kli-Repair-reject jp-mod-reject', () => this.decide('reject'));
    this._note = document.createElement('input');
    this._note.type = 'text';
    this._note.className = 'jp-mod-styled kli-Repair-note';
    // Short enough to be read whole at the panel's default width; the rest is in the title.
    this._note.placeholder = 'Note for the agent';
    this._note.title = 'A note sent to the agent with Reject (optional)';
    this._note.setAttribute('aria-label', 'Note for the agent, sent with Reject');
    this._note.maxLength = 2000;
    this._note.addEventListener('keydown', event => event.stopPropagation());
    this._outcome = document.createElement('span');
    this._outcome.className = 'kli-Repair-outcome';
    this._outcome.setAttribute('role', 'status');
    this._outcome.setAttribute('aria-live', 'polite');
    buttons.append(this._accept, this._reject, this._note, this._outcome);
    this.node.append(reason, buttons);
    this._update();
  }

  readonly candidate: string;

  get decision(): IDecision {
    return this._decision;
  }

  get decisionChanged(): ISignal<this, IDecision> {
    return this._changed;
  }

  /** Apply a decision made elsewhere (e.g. a bulk Accept all in the panel). */
  apply(decision: IDecision, authoritative = false): void {
    const next = merge(this._decision, decision, authoritative);
    if (next !== this._decision) {
      this._decision = next;
      this._update();
      this._changed.emit(next);
    }
  }

  protected onAfterAttach(): void {
    this._watch();
  }

  dispose(): void {
    this._conn?.resolved.disconnect(this._onResolved, this);
    super.dispose();
  }

  private _watch(): UiConnection | null {
    const found = this._lookup();
    // An old output in a notebook now running another kernel: that kernel knows no kli.ui.
    const conn = found && isKliKernel(found.kernel) ? found : null;
    if (conn && conn !== this._conn) {
      this._conn?.resolved.disconnect(this._onResolved, this);
      this._conn = conn;
      conn.resolved.connect(this._onResolved, this);
      conn.ensureOpen();
      const known = conn.state.resolved[this.candidate];
      if (known) {
        this.apply({ state: known.status, text: known.text, by: known.by }, true);
      }
    }
    return this._conn;
  }

  private _onResolved(_: UiConnection, msg: IResolvedMsg): void {
    if (msg.candidate === this.candidate) {
      this.apply(fromResolved(msg), true);
    }
  }

  async decide(action: 'accept' | 'reject'): Promise<void> {
    if (!buttonsEnabled(this._decision)) {
      return;
    }
    const conn = this._watch();
    if (!conn) {
      this.apply({
        state: 'failed',
        text: 'this notebook has no kli kernel running.',
        by: 'ui'
      });
      return;
    }
    if (matchPending(conn.state.pending, this.preview) === 'mismatch') {
      this.apply({
        state: 'gone',
        text: 'the kernel has another preview under this id (it restarted since).',
        by: 'ui'
      });
      return;
    }
    this.apply({ state: 'busy', text: '', by: 'ui' });
    const reply =
      action === 'accept'
        ? await conn.accept(this.candidate)
        : await conn.reject(this.candidate, this._note.value.trim());
    // A `resolved` that arrived first is authoritative; a reply only settles a busy view.
    if (this._decision.state === 'busy') {
      this._decision = OPEN;
    }
    this.apply(fromReply(action, reply));
  }

  private _update(): void {
    const enabled = buttonsEnabled(this._decision);
    this._accept.disabled = !enabled;
    this._reject.disabled = !enabled;
    this._note.disabled = !enabled;
    this._note.hidden = !enabled;
    this.node.dataset.state = this._decision.state;
    this._outcome.textContent = decisionText(this._decision, this.preview.runs);
  }

  private _decision: IDecision = OPEN;
  private _conn: UiConnection | null = null;
  private _accept: HTMLButtonElement;
  private _reject: HTMLButtonElement;
  private _note: HTMLInputElement;
  private _outcome: HTMLSpanElement;
  private _changed = new Signal<this, IDecision>(this);
}

/** A real, keyboard-reachable button in JupyterLab's style. */
export function button(label: string, className: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = `jp-Button kli-Button ${className}`;
  b.textContent = label;
  b.addEventListener('click', event => {
    event.stopPropagation();
    onClick();
  });
  return b;
}
