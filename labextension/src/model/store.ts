/**
 * The activity of one kernel as seen through its `kli.ui` comm: recent events, pending
 * proposals (repair previews and calls held for review: one queue), sessions, how proposals
 * were resolved, and the approval modes. A pure reducer over kernel messages.
 */
import type {
  IBox,
  ICandidate,
  IExpiredMsg,
  IHelloMsg,
  IResolvedMsg,
  ISessionInfo,
  IToolEvent,
  ResolvedStatus
} from '../protocol';
import { filesOf } from './summary';

/** Events kept in memory per kernel (the oldest are dropped first). */
export const MAX_EVENTS = 500;

export interface IResolution {
  status: ResolvedStatus;
  text: string;
  /** The source that decided (`ui`, `widget`, `magic`: a person; `agent`; `kernel`). */
  by: string;
  /** `accepted`, `rejected`, `discarded`, or a refusal's error code. */
  reason?: string;
  /** A Reject's note from the person, for the agent. */
  note?: string;
  /** The recorded change an Accept wrote (its Undo). */
  change?: string;
}

export interface IActivityState {
  events: IToolEvent[];
  pending: ICandidate[];
  sessions: ISessionInfo[];
  resolved: Record<string, IResolution>;
  /** Each tool's `summary_args` (ToolInfo of the hello), by tool name. */
  summaryArgs: Record<string, string[]>;
  /** The approval mode of each kind of action (`file`, `shell`, `eval`: `auto` / `review`). */
  approval: Record<string, string>;
  /** Where the modes come from (the kernel's `origin`, `kept`, `said`; empty: not said). */
  approvalOrigin: IApprovalOrigin;
  /** The box (docs/sandbox.md) as the kernel describes it; null: not said (an older kernel). */
  box: IBox | null;
  /** True once the kernel's hello arrived. */
  ready: boolean;
  /** The tools' root (absolute), from the hello: event paths are relative to it. */
  root?: string | null;
}

/** Where the approval modes come from: kept in a settings file, this kernel only, the default. */
export interface IApprovalOrigin {
  origin: string;
  /** The settings file they are kept in (origin `kept`). */
  kept: string;
  /** The kernel's words for the person ("kept in .kli/settings.json"). */
  said: string;
}

export type Action =
  | { type: 'hello'; msg: IHelloMsg }
  | { type: 'event'; event: IToolEvent }
  | { type: 'resolved'; msg: IResolvedMsg }
  | { type: 'proposed'; candidate: ICandidate }
  | { type: 'expired'; msg: IExpiredMsg }
  | { type: 'approval'; approval: Record<string, string>; origin?: Partial<IApprovalOrigin> }
  | { type: 'sandbox'; box: IBox }
  | { type: 'reset' };

export const INITIAL_STATE: IActivityState = {
  events: [],
  pending: [],
  sessions: [],
  resolved: {},
  summaryArgs: {},
  approval: {},
  approvalOrigin: { origin: '', kept: '', said: '' },
  box: null,
  ready: false
};

function originOf(o: Partial<IApprovalOrigin> | undefined, was: IApprovalOrigin): IApprovalOrigin {
  return o?.origin ? { origin: o.origin, kept: o.kept ?? '', said: o.said ?? '' } : was;
}

function addSession(sessions: ISessionInfo[], id?: string, label?: string): ISessionInfo[] {
  if (!id || sessions.some(s => s.id === id)) {
    return sessions;
  }
  return [...sessions, { id, label: label || id }];
}

/** Pending candidates an event announces: its files with status "preview" and a candidate id. */
export function candidatesOf(event: IToolEvent): ICandidate[] {
  return filesOf(event)
    .filter(f => f.status === 'preview' && typeof f.candidate === 'string' && f.candidate)
    .map(f => ({
      candidate: f.candidate as string,
      path: f.path,
      session: event.session,
      session_label: event.session_label,
      reason: f.reason ?? null,
      message: f.message ?? null,
      file: f
    }));
}

export function reduce(state: IActivityState, action: Action): IActivityState {
  switch (action.type) {
    case 'reset':
      return INITIAL_STATE;
    case 'hello': {
      const events = (action.msg.events ?? []).slice(-MAX_EVENTS);
      let sessions = (action.msg.sessions ?? []).filter(s => s && s.id);
      for (const e of events) {
        sessions = addSession(sessions, e.session, e.session_label);
      }
      const pending = (action.msg.pending ?? []).filter(c => c && typeof c.candidate === 'string');
      const summaryArgs: Record<string, string[]> = {};
      for (const t of action.msg.tools ?? []) {
        if (t && typeof t.name === 'string' && Array.isArray(t.summary_args)) {
          summaryArgs[t.name] = t.summary_args;
        }
      }
      const approval = action.msg.approval ?? state.approval;
      const approvalOrigin = originOf(
        {
          origin: action.msg.approval_origin,
          kept: action.msg.approval_kept,
          said: action.msg.approval_said
        },
        state.approvalOrigin
      );
      const root = action.msg.root ?? state.root ?? null;
      // How the replayed events' proposals ended (the kernel remembers the recent ones).
      const resolved = { ...state.resolved };
      for (const d of action.msg.resolved ?? []) {
        if (d && typeof d.candidate === 'string') {
          const { status, by, reason, note, change } = d;
          resolved[d.candidate] = { status, text: '', by: by ?? '', reason, note, change };
        }
      }
      return {
        ...state,
        events,
        pending,
        sessions,
        summaryArgs,
        approval,
        approvalOrigin,
        box: action.msg.sandbox ?? state.box,
        root,
        resolved,
        ready: true
      };
    }
    case 'event': {
      const e = action.event;
      if (state.events.some(x => x.id === e.id)) {
        return state;
      }
      const events = [...state.events, e].slice(-MAX_EVENTS);
      const known = new Set(state.pending.map(c => c.candidate));
      const fresh = candidatesOf(e).filter(
        c => !known.has(c.candidate) && !(c.candidate in state.resolved)
      );
      return {
        ...state,
        events,
        pending: fresh.length ? [...state.pending, ...fresh] : state.pending,
        sessions: addSession(state.sessions, e.session, e.session_label)
      };
    }
    case 'proposed': {
      const c = action.candidate;
      if (typeof c.candidate !== 'string' || c.candidate in state.resolved) {
        return state;
      }
      const at = state.pending.findIndex(p => p.candidate === c.candidate);
      const pending =
        at < 0 ? [...state.pending, c] : state.pending.map((p, i) => (i === at ? c : p));
      return {
        ...state,
        pending,
        sessions: addSession(state.sessions, c.session, c.session_label)
      };
    }
    case 'expired': {
      const ids = new Set(action.msg.candidates);
      return {
        ...state,
        pending: state.pending.map(c =>
          ids.has(c.candidate) ? { ...c, expired: action.msg.text } : c
        )
      };
    }
    case 'approval':
      return {
        ...state,
        approval: { ...action.approval },
        approvalOrigin: originOf(action.origin, state.approvalOrigin)
      };
    case 'sandbox':
      return { ...state, box: action.box };
    case 'resolved': {
      const { candidate, status, text, by, reason, note, change } = action.msg;
      return {
        ...state,
        pending: state.pending.filter(c => c.candidate !== candidate),
        resolved: {
          ...state.resolved,
          [candidate]: { status, text: text ?? '', by: by ?? '', reason, note, change }
        }
      };
    }
    default:
      return state;
  }
}

export interface IFilter {
  /** A session id, or '' for every session. */
  session: string;
  /** A tool name, or '' for every tool. */
  tool: string;
  /** A file path, or '' (absent) for every file: narrows the pending queue only. */
  path?: string;
}

/** The files a pending proposal changes (a held file call may change several). */
export function pathsOf(c: ICandidate): string[] {
  const paths = (c.files ?? []).map(f => f.path.split('#')[0]);
  if (c.path) {
    paths.push(c.path.split('#')[0]);
  }
  return [...new Set(paths)];
}

/** The files pending proposals change, sorted, for the queue's file filter. */
export function pendingPaths(state: IActivityState): string[] {
  return [...new Set(state.pending.flatMap(pathsOf))].sort();
}

export function matches(filter: IFilter, item: { session?: string; tool?: string }): boolean {
  return (
    (!filter.session || item.session === filter.session) &&
    (!filter.tool || item.tool === undefined || item.tool === filter.tool)
  );
}

/** The events that pass the filter, newest first. */
export function visibleEvents(state: IActivityState, filter: IFilter): IToolEvent[] {
  return state.events.filter(e => matches(filter, e)).reverse();
}

/** The pending proposals that pass the session and file filters, oldest first. */
export function visiblePending(state: IActivityState, filter: IFilter): ICandidate[] {
  return state.pending.filter(
    c =>
      (!filter.session || c.session === filter.session) &&
      (!filter.path || pathsOf(c).includes(filter.path))
  );
}

/** Tool names seen, sorted, for the tool filter. */
export function toolsSeen(state: IActivityState): string[] {
  return [...new Set(state.events.map(e => e.tool))].sort();
}
