/**
 * The state of one repair preview's Accept / Reject, from the user's click to the kernel's
 * answer (the reply to the request and, for every UI, the `resolved` message). Pure.
 */
import type {
  ICandidate,
  IErrorMsg,
  IResolvedDecision,
  IResolvedMsg,
  IResultMsg,
  ResolvedStatus
} from '../protocol';
import { UNKNOWN_CANDIDATE } from '../protocol';

/** A kernel's decision (ResolvedStatus), or where the UI is before or without one. */
export type DecisionState = 'open' | 'busy' | ResolvedStatus | 'gone' | 'failed';

export interface IDecision {
  state: DecisionState;
  /** The kernel's words (the result text or the resolved text). */
  text: string;
  /** Who resolved it, when the kernel said (ui, agent, magic, widget, kernel). */
  by: string;
  /** The kernel's refinement of the state (`discarded`: dropped by a bound on the queue). */
  reason?: string;
  /** A Reject's note from the person, for the agent. */
  note?: string;
}

export const OPEN: IDecision = { state: 'open', text: '', by: '' };

/** Final states: the buttons stay disabled. */
export function isFinal(d: IDecision): boolean {
  return (
    d.state === 'written' || d.state === 'rejected' || d.state === 'refused' || d.state === 'gone'
  );
}

/** The buttons are usable only while the preview is open or the last attempt failed to reach it. */
export function buttonsEnabled(d: IDecision): boolean {
  return d.state === 'open' || d.state === 'failed';
}

/** The decision an edit result carries (`details.resolved`, docs/protocol.md). */
function resolvedOf(details: Record<string, unknown>): IResolvedDecision | null {
  const r = details.resolved;
  if (!r || typeof r !== 'object' || Array.isArray(r)) {
    return null;
  }
  const status = (r as { status?: unknown }).status;
  return typeof status === 'string' ? (r as IResolvedDecision) : null;
}

/**
 * The decision a reply to `accept` / `reject` means, read from its codes (never its text):
 * `details.resolved` when the kernel decided, `details.error` `unknown_candidate` when there was
 * nothing left to decide; any other failure left the candidate pending.
 */
export function fromReply(action: 'accept' | 'reject', reply: IResultMsg | IErrorMsg): IDecision {
  const text = reply.text ?? (reply.op === 'error' ? reply.error : '');
  const details = reply.op === 'result' ? (reply.details ?? {}) : {};
  const resolved = resolvedOf(details);
  if (resolved) {
    return {
      state: resolved.status,
      text,
      by: resolved.by ?? 'ui',
      reason: resolved.reason,
      note: resolved.note
    };
  }
  if (reply.op === 'result' && reply.ok) {
    return { state: action === 'accept' ? 'written' : 'rejected', text, by: 'ui' };
  }
  if (details.error === UNKNOWN_CANDIDATE) {
    // Resolved already, or made by a kernel that has since restarted: nothing to decide.
    return { state: 'gone', text, by: 'ui' };
  }
  return { state: 'failed', text, by: 'ui' };
}

export function fromResolved(msg: IResolvedMsg): IDecision {
  return {
    state: msg.status,
    text: msg.text ?? '',
    by: msg.by ?? '',
    reason: msg.reason,
    note: msg.note
  };
}

/**
 * Combine what is known with news about the same candidate: a final state is kept, except
 * that the kernel's `resolved` (authoritative) may replace a reply's guess.
 */
export function merge(current: IDecision, next: IDecision, authoritative = false): IDecision {
  if (isFinal(current) && !authoritative) {
    return current;
  }
  if (authoritative && isFinal(current) && current.state === next.state && current.text) {
    return current;
  }
  return next;
}

/** Refusal reasons that mean "the file is not as the preview saw it". */
export const FILE_CHANGED = ['stale_candidate', 'file_changed'];

/** The refusal of an agent's held call whose files changed (approval.STALE). */
export const STALE_PROPOSAL = 'stale_proposal';

/**
 * The words shown after the buttons. `runs`: the proposal is a held command or code, which an
 * Accept runs (it writes nothing itself).
 */
export function decisionText(d: IDecision, runs = false): string {
  const by = d.by && d.by !== 'ui' ? ` (by ${d.by})` : '';
  switch (d.state) {
    case 'open':
      return '';
    case 'busy':
      return 'Sending…';
    case 'written':
      return `${runs ? 'Ran' : 'Written'}${by}.`;
    case 'rejected':
      return d.reason === 'discarded'
        ? 'Discarded by the kernel: too many proposals were pending.'
        : `Rejected${by}.${d.note ? ` Note for the agent: ${d.note}` : ''}`;
    case 'refused':
      if (d.reason === STALE_PROPOSAL) {
        // An agent's held change: the agent makes it again, the person does not.
        return (
          `Refused${by}: a file it changes was changed since this proposal was made, so ` +
          'nothing was written. To apply the change, ask the agent to make it again against ' +
          'the file as it is now (or change the file by hand).'
        );
      }
      if (d.reason && FILE_CHANGED.includes(d.reason)) {
        // The kernel's words are for the agent (re-read, redo the edit): say what a person can do.
        return (
          `Refused${by}: the file changed since this preview was made, so nothing was written. ` +
          'To apply the change, run the edit again for a fresh preview of the file as it is ' +
          'now (or change the file by hand).'
        );
      }
      return `Refused${by}: ${d.text || 'the file changed since the preview.'}`;
    case 'gone':
      return `No longer pending: ${d.text || 'the kernel does not know this preview.'}`;
    case 'failed':
      return `Failed: ${d.text || 'no answer from the kernel.'}`;
  }
}

/** What a preview shown on screen is: its candidate id, file path and candidate text. */
export interface IPreviewIdentity {
  candidate: string;
  path: string;
  after: string | null;
  /** A held command or code: Accept runs it. */
  runs?: boolean;
}

/**
 * Whether the kernel's pending candidate with this id is the preview on screen. Candidate ids
 * restart with the kernel, so an old notebook output may name an id that now belongs to
 * another preview: `mismatch` then, and Accept must not send it. `unknown` when the kernel
 * lists no such id (resolved already, or not announced yet): the kernel decides.
 */
export function matchPending(
  pending: ICandidate[],
  preview: IPreviewIdentity
): 'match' | 'mismatch' | 'unknown' {
  const c = pending.find(p => p.candidate === preview.candidate);
  if (!c) {
    return 'unknown';
  }
  if (c.path !== preview.path) {
    return 'mismatch';
  }
  const after = c.file?.after;
  if (typeof after === 'string' && preview.after !== null && after !== preview.after) {
    return 'mismatch';
  }
  return 'match';
}

/** The head's word once every preview of a result is decided ('written', 'rejected'…), else null. */
export function decidedWord(decisions: (IDecision | null)[]): string | null {
  const states = decisions.filter((d): d is IDecision => d !== null).map(d => d.state);
  if (!states.length || states.some(s => s === 'open' || s === 'busy' || s === 'failed')) {
    return null;
  }
  const distinct = [...new Set(states)];
  return distinct.length === 1
    ? distinct[0] === 'gone'
      ? 'no longer pending'
      : distinct[0]
    : 'decided';
}
