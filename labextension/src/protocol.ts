/**
 * The shapes the kli kernel sends and receives (docs/protocol.md is the contract).
 *
 * Types only: nothing here touches the DOM or JupyterLab, so the models can be unit-tested.
 */

/** The MIME type of a magic's edit / write result. */
export const EDIT_MIME = 'application/vnd.kli.edit+json';

/** The comm target the frontend opens on a kli kernel. */
export const UI_TARGET = 'kli.ui';

/** Protocol version sent with every message. */
export const PROTOCOL_VERSION = 1;

/** How many recent events the kernel replays when the comm opens. */
export const DEFAULT_REPLAY = 200;

export type FileStatus =
  'written' | 'preview' | 'rejected' | 'reverted' | 'unchanged' | 'deleted' | 'moved';

/** A character range in FILE.after that a repair changed (code point offsets). */
export interface IMark {
  from: number;
  to: number;
  note?: string;
}

/** One file's change (tools/core/changes.py file_change). */
export interface IFileChange {
  path: string;
  status: FileStatus | string;
  language?: string;
  added?: number;
  removed?: number;
  before?: string | null;
  after?: string | null;
  too_large?: boolean;
  candidate?: string | null;
  reason?: string | null;
  message?: string | null;
  marks?: IMark[];
  [extra: string]: unknown;
}

export type EventSource = 'agent' | 'magic' | 'ui' | 'cli' | 'api' | string;

/** One tool call, from any source. */
export interface IToolEvent {
  kind: 'call' | string;
  id: string;
  time?: number;
  tool: string;
  args?: Record<string, unknown>;
  session?: string;
  session_label?: string;
  source?: EventSource;
  ok: boolean;
  text?: string;
  details?: { files?: IFileChange[]; [key: string]: unknown };
  duration_ms?: number;
}

/** A pending repair preview. */
export interface ICandidate {
  candidate: string;
  path: string;
  session?: string;
  session_label?: string;
  reason?: string | null;
  message?: string | null;
  file?: IFileChange;
}

export interface ISessionInfo {
  id: string;
  label?: string;
}

/** The MIME bundle `application/vnd.kli.edit+json`. */
export interface IEditBundle {
  v?: number;
  tool?: string;
  ok?: boolean;
  text?: string;
  session?: string;
  files?: IFileChange[];
}

export type ResolvedStatus = 'written' | 'rejected' | 'refused';

/** The one error code for a candidate id that is not pending. */
export const UNKNOWN_CANDIDATE = 'unknown_candidate';

/** A decision on a candidate: `details.resolved` of the result that made it. */
export interface IResolvedDecision {
  candidate: string;
  status: ResolvedStatus;
  reason?: string;
  by?: string;
}

export interface IHelloMsg {
  v?: number;
  op: 'hello';
  id?: string | number;
  events?: IToolEvent[];
  pending?: ICandidate[];
  sessions?: ISessionInfo[];
}

export interface IEventMsg {
  v?: number;
  op: 'event';
  event: IToolEvent;
}

export interface IResolvedMsg {
  v?: number;
  op: 'resolved';
  candidate: string;
  status: ResolvedStatus;
  text?: string;
  by?: string;
  /** Refines status: "discarded" (its session closed), an edit error code for "refused"… */
  reason?: string;
}

export interface IResultMsg {
  v?: number;
  op: 'result';
  id: string | number;
  ok: boolean;
  text?: string;
  details?: Record<string, unknown>;
}

export interface IErrorMsg {
  v?: number;
  op: 'error';
  id: string | number | null;
  error: string;
  text?: string;
}

export type KernelMsg = IHelloMsg | IEventMsg | IResolvedMsg | IResultMsg | IErrorMsg;

/** Parse a comm message's data into a known kernel message, or null. */
export function parseKernelMsg(data: unknown): KernelMsg | null {
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    return null;
  }
  const msg = data as { op?: unknown; v?: unknown };
  if (msg.v !== undefined && msg.v !== PROTOCOL_VERSION) {
    return null;
  }
  switch (msg.op) {
    case 'hello':
      return msg as IHelloMsg;
    case 'event':
      return isObject((msg as IEventMsg).event) ? (msg as IEventMsg) : null;
    case 'resolved':
      return typeof (msg as IResolvedMsg).candidate === 'string' ? (msg as IResolvedMsg) : null;
    case 'result':
      return msg as IResultMsg;
    case 'error':
      return msg as IErrorMsg;
    default:
      return null;
  }
}

function isObject(v: unknown): boolean {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}
