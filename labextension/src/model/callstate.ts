/**
 * What state a tool call is in, as its row in *Tool calls* says it: a call that made a
 * proposal is `held` (a call waiting for review) or a repair `preview` while it waits,
 * `expired` once its agent left, then `written` (`ran`: a held command or code, accepted),
 * `rejected`, `refused` (an Accept that found
 * the file changed) or `discarded` (by the kernel) as it was decided, and `undone` once the
 * change it wrote was taken back; any other call that wrote files is `written` (or `undone`),
 * the rest `ok` or `error`. A person's decision (an Accept or Reject from the panel, the widget
 * or a magic) is shown on the proposal it decided, as the person's. Pure.
 */
import type { IResolvedDecision, IToolEvent } from '../protocol';
import type { IActivityState, IResolution } from './store';
import { filesOf } from './summary';

export type CallState =
  | 'held'
  | 'preview'
  | 'expired'
  | 'written'
  | 'ran'
  | 'rejected'
  | 'refused'
  | 'discarded'
  | 'undone'
  | 'ok'
  | 'error';

/** Sources of a person's call: the panel, the output widget, a magic typed in a cell. */
export const PERSON_SOURCES: readonly string[] = ['ui', 'widget', 'magic'];

export function isPerson(source: string | undefined | null): boolean {
  return !!source && PERSON_SOURCES.includes(source);
}

/** Who decided, as the row names them. */
export function deciderName(by: string | undefined | null): string {
  if (isPerson(by)) {
    return 'you';
  }
  if (by === 'agent') {
    return 'the agent';
  }
  if (by === 'kernel') {
    return 'kli';
  }
  return by || '';
}

export interface ICallStatus {
  state: CallState;
  /** The proposal the call made, when it made one. */
  proposal: string;
  /** Who decided it (`you`, `the agent`, `kli`); empty while undecided. */
  by: string;
  /** A Reject's note for the agent. */
  note: string;
  /** The recorded change the call (or the Accept of its proposal) wrote: its Undo. */
  change: string;
  /** The decision's call (a person's `edit accept_repair` / `reject_repair`), when seen. */
  decision: IToolEvent | null;
  /** What the decider was told (known for decisions seen live). */
  text: string;
}

function record(event: IToolEvent): Record<string, unknown> {
  const d = event.details;
  return d && typeof d === 'object' ? d : {};
}

/** The proposal an event's call made (a held call, or a repair preview); '' when none. */
export function proposalOf(event: IToolEvent): string {
  const d = record(event);
  if (d.resolved) {
    return ''; // a decision's call, not a proposal
  }
  if (typeof d.proposal === 'string' && d.status === 'pending') {
    return d.proposal;
  }
  const preview = filesOf(event).find(
    f => f.status === 'preview' && typeof f.candidate === 'string' && f.candidate
  );
  return preview ? (preview.candidate as string) : '';
}

/** The decision an event's call made (`details.resolved`), or null. */
export function decisionOf(event: IToolEvent): IResolvedDecision | null {
  const r = record(event).resolved;
  return r && typeof r === 'object' && typeof (r as IResolvedDecision).candidate === 'string'
    ? (r as IResolvedDecision)
    : null;
}

/** The changes taken back by an undo that is itself still in force (a redo undoes the undo). */
export function undoneChanges(events: readonly IToolEvent[]): Set<string> {
  const undoes = new Map<string, string[]>(); // an undo's own change -> the changes it undid
  for (const e of events) {
    const d = record(e);
    if (e.tool === 'undo' && e.ok && typeof d.change === 'string' && Array.isArray(d.undone)) {
      undoes.set(
        d.change,
        d.undone.filter((x): x is string => typeof x === 'string')
      );
    }
  }
  const memo = new Map<string, boolean>();
  const isUndone = (change: string, depth = 0): boolean => {
    const known = memo.get(change);
    if (known !== undefined) {
      return known;
    }
    let out = false;
    if (depth < 64) {
      for (const [by, taken] of undoes) {
        if (taken.includes(change) && !isUndone(by, depth + 1)) {
          out = true;
          break;
        }
      }
    }
    memo.set(change, out);
    return out;
  };
  const out = new Set<string>();
  for (const taken of undoes.values()) {
    for (const c of taken) {
      if (isUndone(c)) {
        out.add(c);
      }
    }
  }
  return out;
}

/** The person's decision calls, by the proposal they decided. */
export function decisionsByProposal(events: readonly IToolEvent[]): Map<string, IToolEvent> {
  const out = new Map<string, IToolEvent>();
  for (const e of events) {
    const d = decisionOf(e);
    if (d && isPerson(e.source)) {
      out.set(d.candidate, e);
    }
  }
  return out;
}

/** The events listed as rows: a person's decision folds into the row of the proposal it
 * decided when that row is there (its own row otherwise, so it is never lost). */
export function listedEvents(events: readonly IToolEvent[]): IToolEvent[] {
  const proposals = new Set(events.map(proposalOf).filter(Boolean));
  return events.filter(e => {
    const d = decisionOf(e);
    return !(d && isPerson(e.source) && proposals.has(d.candidate));
  });
}

function fromResolution(res: Pick<IResolution, 'status' | 'reason'>): CallState {
  if (res.status === 'written') {
    return 'written';
  }
  if (res.status === 'refused') {
    return 'refused';
  }
  return res.reason === 'discarded' ? 'discarded' : 'rejected';
}

/** The state of `event`'s call now. `undone`: `undoneChanges` of the state's events;
 * `decisions`: `decisionsByProposal` of them (both computed once per render). */
export function callStatus(
  state: Pick<IActivityState, 'pending' | 'resolved'>,
  event: IToolEvent,
  undone: ReadonlySet<string> = new Set(),
  decisions: ReadonlyMap<string, IToolEvent> = new Map()
): ICallStatus {
  const d = record(event);
  const own = typeof d.change === 'string' ? d.change : '';
  const proposal = proposalOf(event);
  const base = { proposal, by: '', note: '', change: '', decision: null, text: '' };
  if (!proposal) {
    const decided = decisionOf(event);
    if (decided && event.ok) {
      // A decision's call listed on its own (its proposal's row is gone): say what it did.
      const state = fromResolution(decided);
      return {
        ...base,
        state: state === 'written' && own && undone.has(own) ? 'undone' : state,
        by: deciderName(decided.by ?? event.source),
        note: decided.note ?? '',
        change: own
      };
    }
    const wrote = filesOf(event).some(f => !f.detected && f.status === 'written');
    if (event.ok && own && undone.has(own)) {
      return { ...base, state: 'undone', change: own };
    }
    return { ...base, state: !event.ok ? 'error' : wrote ? 'written' : 'ok', change: own };
  }
  const waiting = typeof d.proposal === 'string' ? 'held' : 'preview';
  const pending = state.pending.find(c => c.candidate === proposal);
  if (pending) {
    return { ...base, state: pending.expired ? 'expired' : waiting };
  }
  const decision = decisions.get(proposal) ?? null;
  const fromEvent = decision ? decisionOf(decision) : null;
  const res: (IResolution | IResolvedDecision) | undefined =
    state.resolved[proposal] ?? fromEvent ?? undefined;
  if (!res) {
    return { ...base, state: waiting }; // its outcome is not known here (yet)
  }
  const eventChange = decision && typeof decision.details?.change === 'string';
  const change = res.change || (eventChange ? (decision!.details!.change as string) : '');
  let decided = fromResolution(res);
  if (decided === 'written' && (d.action === 'shell' || d.action === 'eval')) {
    decided = 'ran'; // an accepted command or code ran; it wrote nothing itself
  }
  return {
    ...base,
    state: decided === 'written' && change && undone.has(change) ? 'undone' : decided,
    by: deciderName(res.by),
    note: res.note ?? '',
    change,
    decision,
    text: 'text' in res && typeof res.text === 'string' ? res.text : ''
  };
}

/** The words of a decided proposal's row: "rejected by you", "written by you". */
export function statusWords(status: ICallStatus): string {
  return status.by && status.state !== 'undone' ? `${status.state} by ${status.by}` : status.state;
}
