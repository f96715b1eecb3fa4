/**
 * One `kli.ui` comm per kernel, shared by the inline views and the activity panel.
 *
 * The frontend opens the comm (docs/protocol.md); the kernel answers with `hello` and then
 * streams `event` and `resolved`. Requests (`accept`, `reject`, `replay`) carry an id and are
 * matched with the kernel's `result` / `error` / `hello` reply.
 */
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';
import {
  DEFAULT_REPLAY,
  IApprovalMsg,
  IChangesMsg,
  IErrorMsg,
  IHelloMsg,
  IModelApplyMsg,
  IModelReadMsg,
  IResolvedMsg,
  IResultMsg,
  ISandboxMsg,
  PROTOCOL_VERSION,
  UI_TARGET,
  parseKernelMsg
} from './protocol';
import { Action, IActivityState, INITIAL_STATE, reduce } from './model/store';

/** How long a request waits for the kernel's reply (a busy kernel queues comm messages). */
export const REQUEST_TIMEOUT_MS = 60000;

export type ConnectionStatus = 'idle' | 'opening' | 'open' | 'closed';

type Reply = IResultMsg | IErrorMsg | IHelloMsg | IApprovalMsg | IChangesMsg | ISandboxMsg;

interface IWaiting {
  resolve: (reply: Reply) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** Whether a kernel is a kli kernel by its kernelspec name. */
export function isKliKernel(kernel: Kernel.IKernelConnection | null | undefined): boolean {
  return !!kernel && /(^|[-_.])kli([-_.]|$)/i.test(kernel.name);
}

export class UiConnection {
  constructor(readonly kernel: Kernel.IKernelConnection) {
    kernel.statusChanged.connect(this._onKernelStatus, this);
    kernel.disposed.connect(() => this.dispose());
  }

  get state(): IActivityState {
    return this._state;
  }

  get status(): ConnectionStatus {
    return this._status;
  }

  /** Emitted after every change of state or status. */
  get changed(): ISignal<this, IActivityState> {
    return this._changed;
  }

  /** Emitted for every `resolved` message from the kernel. */
  get resolved(): ISignal<this, IResolvedMsg> {
    return this._resolved;
  }

  /** Emitted for every `model_read` / `model_apply` from the kernel (plugins/openmodel.ts). */
  get modelRequest(): ISignal<this, IModelReadMsg | IModelApplyMsg> {
    return this._modelRequest;
  }

  /** Send a message that gets no reply (`notebooks`, `model_reply`); false when not open. */
  notify(op: string, fields: Record<string, unknown>): boolean {
    const comm = this._comm;
    if (!comm || this._status !== 'open') {
      return false;
    }
    comm.send({ v: PROTOCOL_VERSION, op, ...fields } as never);
    return true;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Open the comm unless it is open or opening. Safe to call often. */
  ensureOpen(): void {
    if (this._disposed || this._status === 'open' || this._status === 'opening') {
      return;
    }
    this._wanted = true;
    let comm: Kernel.IComm;
    try {
      comm = this.kernel.createComm(UI_TARGET);
    } catch (err) {
      console.warn('kli: cannot open the kli.ui comm', err);
      this._setStatus('closed');
      return;
    }
    this._comm = comm;
    comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => {
      if (comm === this._comm) {
        this._onData(msg.content.data);
      }
    };
    comm.onClose = () => {
      if (comm === this._comm) {
        this._comm = null;
        // Closed before its hello: the kernel does not serve kli.ui; do not retry by itself.
        if (this._status === 'opening') {
          this._wanted = false;
        }
        this._failWaiting('the kli.ui comm was closed');
        this._setStatus('closed');
      }
    };
    this._setStatus('opening');
    comm.open({ v: PROTOCOL_VERSION, replay: DEFAULT_REPLAY });
  }

  accept(candidate: string): Promise<IResultMsg | IErrorMsg> {
    return this._request('accept', { candidate }) as Promise<IResultMsg | IErrorMsg>;
  }

  /** Reject a pending proposal; `note` (optional) reaches the agent. */
  reject(candidate: string, note = ''): Promise<IResultMsg | IErrorMsg> {
    const fields: Record<string, unknown> = note ? { candidate, note } : { candidate };
    return this._request('reject', fields) as Promise<IResultMsg | IErrorMsg>;
  }

  /** Accept or reject every pending proposal of one session and/or one file (none: all). */
  bulk(
    action: 'accept' | 'reject',
    scope: { session?: string; path?: string; note?: string } = {}
  ): Promise<IResultMsg | IErrorMsg> {
    const fields: Record<string, unknown> = { action };
    for (const [k, v] of Object.entries(scope)) {
      if (v) {
        fields[k] = v;
      }
    }
    return this._request('bulk', fields) as Promise<IResultMsg | IErrorMsg>;
  }

  /** Take back a recorded change, or everything one session did since a time (the kernel
   * runs the `undo` tool as the person); `force` after the person confirmed a refusal. */
  undo(scope: {
    change?: string;
    session?: string;
    since?: string;
    force?: boolean;
  }): Promise<IResultMsg | IErrorMsg> {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(scope)) {
      if (v !== undefined && v !== '') {
        fields[k] = v;
      }
    }
    return this._request('undo', fields) as Promise<IResultMsg | IErrorMsg>;
  }

  /** The undo timeline: the recorded changes, newest first (the kernel reads its store; no
   * tool call). */
  changes(scope: { session?: string; limit?: number } = {}): Promise<IChangesMsg | IErrorMsg> {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(scope)) {
      if (v !== undefined && v !== '') {
        fields[k] = v;
      }
    }
    return this._request('changes', fields) as Promise<IChangesMsg | IErrorMsg>;
  }

  /** Switch approval mode for one kind of action, or every kind (no mode: the modes stay);
   * `keep`: true keeps the choice in a settings file, false for this kernel only, absent:
   * where it is now. */
  setApproval(mode: string | null, kind?: string, keep?: boolean): Promise<Reply> {
    const fields: Record<string, unknown> = {};
    if (mode) {
      fields.mode = mode;
    }
    if (kind) {
      fields.kind = kind;
    }
    if (keep !== undefined) {
      fields.keep = keep;
    }
    return this._request('approval', fields);
  }

  /** Switch the box (docs/sandbox.md): `mode` on / off, `network` off / all (absent: as it
   * is); kept in the project's settings as approval is. */
  setSandbox(mode: string | null, network?: string): Promise<Reply> {
    const fields: Record<string, unknown> = {};
    if (mode) {
      fields.mode = mode;
    }
    if (network) {
      fields.network = network;
    }
    return this._request('sandbox', fields);
  }

  /** Ask the kernel to replay recent events (answered by a new hello). */
  replay(limit = DEFAULT_REPLAY): Promise<Reply> {
    return this._request('replay', { limit });
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._failWaiting('the kernel went away');
    if (this._comm && !this._comm.isDisposed) {
      try {
        this._comm.close();
      } catch {
        // the kernel is gone already
      }
    }
    this._comm = null;
    this.kernel.statusChanged.disconnect(this._onKernelStatus, this);
    this._status = 'closed';
    this._changed.emit(this._state);
    Signal.clearData(this);
  }

  private _request(op: string, fields: Record<string, unknown>): Promise<Reply> {
    this.ensureOpen();
    const comm = this._comm;
    if (!comm) {
      return Promise.resolve(errorReply(null, 'not connected to the kernel'));
    }
    const id = `ui${++this._nextId}`;
    return new Promise<Reply>(resolve => {
      const timer = setTimeout(() => {
        this._waiting.delete(id);
        resolve(errorReply(id, 'the kernel did not answer in time'));
      }, REQUEST_TIMEOUT_MS);
      this._waiting.set(id, { resolve, timer });
      comm.send({ v: PROTOCOL_VERSION, op, id, ...fields } as never);
    });
  }

  private _onData(data: unknown): void {
    const msg = parseKernelMsg(data);
    if (!msg) {
      return;
    }
    if (
      msg.op === 'result' ||
      msg.op === 'error' ||
      msg.op === 'changes' ||
      ((msg.op === 'hello' || msg.op === 'approval' || msg.op === 'sandbox') && msg.id != null)
    ) {
      const id = String(msg.id);
      const waiting = this._waiting.get(id);
      if (waiting) {
        this._waiting.delete(id);
        clearTimeout(waiting.timer);
        waiting.resolve(msg);
      }
    }
    switch (msg.op) {
      case 'hello':
        this._status = 'open';
        this._dispatch({ type: 'hello', msg });
        break;
      case 'event':
        this._dispatch({ type: 'event', event: msg.event });
        break;
      case 'resolved':
        this._dispatch({ type: 'resolved', msg });
        this._resolved.emit(msg);
        break;
      case 'proposed':
        this._dispatch({ type: 'proposed', candidate: msg.candidate });
        break;
      case 'expired':
        this._dispatch({ type: 'expired', msg });
        break;
      case 'approval':
        this._dispatch({
          type: 'approval',
          approval: msg.approval,
          origin: { origin: msg.origin, kept: msg.kept, said: msg.said }
        });
        break;
      case 'sandbox':
        this._dispatch({ type: 'sandbox', box: msg.box });
        break;
      case 'model_read':
      case 'model_apply':
        this._modelRequest.emit(msg);
        break;
      default:
        break;
    }
  }

  private _dispatch(action: Action): void {
    this._state = reduce(this._state, action);
    this._changed.emit(this._state);
  }

  private _setStatus(status: ConnectionStatus): void {
    this._status = status;
    this._changed.emit(this._state);
  }

  private _failWaiting(text: string): void {
    for (const [id, w] of this._waiting) {
      clearTimeout(w.timer);
      w.resolve(errorReply(id, text));
    }
    this._waiting.clear();
  }

  private _onKernelStatus(_: Kernel.IKernelConnection, status: Kernel.Status): void {
    if (status === 'restarting' || status === 'autorestarting' || status === 'dead') {
      // A restart disposes the kernel's comms: start over once it is back.
      this._comm = null;
      this._failWaiting('the kernel restarted');
      this._state = reduce(this._state, { type: 'reset' });
      this._setStatus('closed');
    } else if (status === 'idle' && this._status === 'closed' && this._wanted) {
      this.ensureOpen();
    }
  }

  private _comm: Kernel.IComm | null = null;
  private _state: IActivityState = INITIAL_STATE;
  private _status: ConnectionStatus = 'idle';
  private _wanted = false;
  private _disposed = false;
  private _nextId = 0;
  private _waiting = new Map<string, IWaiting>();
  private _changed = new Signal<this, IActivityState>(this);
  private _resolved = new Signal<this, IResolvedMsg>(this);
  private _modelRequest = new Signal<this, IModelReadMsg | IModelApplyMsg>(this);
}

function errorReply(id: string | null, text: string): IErrorMsg {
  return { v: PROTOCOL_VERSION, op: 'error', id, error: 'frontend', text };
}

const connections = new WeakMap<Kernel.IKernelConnection, UiConnection>();

/** The one connection of a kernel (created on first use; the comm opens on ensureOpen()). */
export function connectionFor(kernel: Kernel.IKernelConnection): UiConnection {
  let conn = connections.get(kernel);
  if (!conn || conn.isDisposed) {
    conn = new UiConnection(kernel);
    connections.set(kernel, conn);
  }
  return conn;
}
