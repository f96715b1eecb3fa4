import { describe, expect, it } from 'vitest';
import {
  callStatus,
  decisionsByProposal,
  listedEvents,
  statusWords,
  undoneChanges
} from '../model/callstate';
import { INITIAL_STATE, IActivityState, reduce } from '../model/store';
import type { IToolEvent } from '../protocol';

function ev(id: string, over: Partial<IToolEvent> = {}): IToolEvent {
  return {
    kind: 'call',
    id,
    tool: 'edit',
    ok: true,
    session: 's1',
    session_label: 'agent',
    source: 'agent',
    ...over
  };
}

/** An agent's edit held for review as proposal p2 (details as approval._propose makes them). */
const held = ev('e1', {
  details: {
    status: 'pending',
    proposal: 'p2',
    files: [{ path: 'a.txt', status: 'preview', candidate: 'p2', before: 'a\n', after: 'b\n' }]
  }
});

/** An agent's edit whose repair is previewed as candidate c3 (not ok: nothing written). */
const preview = ev('e2', {
  ok: false,
  details: {
    candidate: 'c3',
    candidates: ['c3'],
    files: [{ path: 'f.py', status: 'preview', candidate: 'c3', before: 'x(\n', after: 'x()\n' }]
  }
});

function withEvents(...events: IToolEvent[]): IActivityState {
  let s = reduce(INITIAL_STATE, {
    type: 'hello',
    msg: { op: 'hello', events: [], pending: [], sessions: [], tools: [], protocol: 1 }
  });
  for (const event of events) {
    s = reduce(s, { type: 'event', event });
  }
  return s;
}

function status(s: IActivityState, e: IToolEvent): string {
  const st = callStatus(s, e, undoneChanges(s.events), decisionsByProposal(s.events));
  return statusWords(st);
}

describe('callStatus', () => {
  it('a held call reads "held" while it waits, then "written by you" once the person accepts', () => {
    let s = withEvents(held);
    s = reduce(s, {
      type: 'proposed',
      candidate: { candidate: 'p2', path: 'a.txt', kind: 'call' }
    });
    expect(status(s, held)).toBe('held');
    s = reduce(s, {
      type: 'resolved',
      msg: {
        op: 'resolved',
        candidate: 'p2',
        status: 'written',
        text: 'Accepted proposal p2',
        by: 'ui',
        reason: 'accepted',
        change: 'ch-1'
      }
    });
    const st = callStatus(s, held);
    expect(st.state).toBe('written');
    expect(st.by).toBe('you');
    expect(st.change).toBe('ch-1');
    expect(statusWords(st)).toBe('written by you');
  });

  it('a held command reads "ran by you" once accepted (it wrote nothing itself)', () => {
    const bash = ev('e20', {
      tool: 'bash',
      details: { status: 'pending', proposal: 'p9', action: 'shell', files: [], command: 'make' }
    });
    let s = withEvents(bash);
    s = reduce(s, { type: 'proposed', candidate: { candidate: 'p9', path: '', kind: 'call' } });
    expect(status(s, bash)).toBe('held');
    s = reduce(s, {
      type: 'resolved',
      msg: {
        op: 'resolved',
        candidate: 'p9',
        status: 'written',
        text: '',
        by: 'ui',
        reason: 'accepted'
      }
    });
    expect(status(s, bash)).toBe('ran by you');
  });

  it('a held call rejected by the person reads "rejected by you" with the note', () => {
    let s = withEvents(held);
    s = reduce(s, {
      type: 'proposed',
      candidate: { candidate: 'p2', path: 'a.txt', kind: 'call' }
    });
    const reject = ev('e3', {
      source: 'ui',
      args: { reject_repair: 'p2', note: 'not this' },
      details: {
        candidate: 'p2',
        status: 'rejected',
        resolved: {
          candidate: 'p2',
          status: 'rejected',
          reason: 'rejected',
          by: 'ui',
          note: 'not this'
        }
      }
    });
    s = reduce(s, { type: 'event', event: reject });
    s = reduce(s, {
      type: 'resolved',
      msg: {
        op: 'resolved',
        candidate: 'p2',
        status: 'rejected',
        text: '',
        by: 'ui',
        reason: 'rejected',
        note: 'not this'
      }
    });
    const st = callStatus(s, held, undoneChanges(s.events), decisionsByProposal(s.events));
    expect(statusWords(st)).toBe('rejected by you');
    expect(st.note).toBe('not this');
    expect(st.decision?.id).toBe('e3');
    // The person's Reject is not listed as a call of the agent: it is on the proposal's row.
    expect(listedEvents(s.events).map(e => e.id)).toEqual(['e1']);
  });

  it('a repair preview reads "preview" (not error), then "written" after its Accept', () => {
    let s = withEvents(preview);
    expect(s.pending.map(c => c.candidate)).toEqual(['c3']);
    expect(status(s, preview)).toBe('preview');
    const accept = ev('e4', {
      source: 'ui',
      args: { accept_repair: 'c3', path: 'f.py' },
      details: {
        change: 'ch-9',
        files: [{ path: 'f.py', status: 'written', before: 'x(\n', after: 'x()\n' }],
        resolved: { candidate: 'c3', status: 'written', reason: 'accepted', by: 'ui' }
      }
    });
    s = reduce(s, { type: 'event', event: accept });
    s = reduce(s, {
      type: 'resolved',
      msg: {
        op: 'resolved',
        candidate: 'c3',
        status: 'written',
        text: '',
        by: 'ui',
        reason: 'accepted'
      }
    });
    const st = callStatus(s, preview, undoneChanges(s.events), decisionsByProposal(s.events));
    expect(statusWords(st)).toBe('written by you');
    expect(st.change).toBe('ch-9'); // the Accept's change: Undo on the proposal's row
    expect(listedEvents(s.events).map(e => e.id)).toEqual(['e2']);
  });

  it('a proposal whose agent left reads "expired"; one the kernel dropped reads "discarded"', () => {
    let s = withEvents(held);
    s = reduce(s, {
      type: 'proposed',
      candidate: { candidate: 'p2', path: 'a.txt', kind: 'call' }
    });
    s = reduce(s, {
      type: 'expired',
      msg: {
        op: 'expired',
        candidates: ['p2'],
        session: 's1',
        session_label: 'agent',
        text: 'expired — agent disconnected'
      }
    });
    expect(status(s, held)).toBe('expired');
    s = reduce(s, {
      type: 'resolved',
      msg: {
        op: 'resolved',
        candidate: 'p2',
        status: 'rejected',
        text: '',
        by: 'kernel',
        reason: 'discarded'
      }
    });
    expect(status(s, held)).toBe('discarded by kli');
  });

  it('a written change reads "undone" once an undo takes it back, and "written" again after the redo', () => {
    const edit = ev('e5', {
      details: { change: 'ch-1', files: [{ path: 'a.txt', status: 'written' }] }
    });
    const read = ev('e6', { tool: 'read' });
    const failed = ev('e7', { ok: false });
    let s = withEvents(edit, read, failed);
    expect(status(s, edit)).toBe('written');
    expect(status(s, read)).toBe('ok');
    expect(status(s, failed)).toBe('error');
    const undo = ev('e8', {
      tool: 'undo',
      source: 'ui',
      details: { change: 'ch-2', undone: ['ch-1'] }
    });
    s = reduce(s, { type: 'event', event: undo });
    expect(status(s, edit)).toBe('undone');
    const redo = ev('e9', {
      tool: 'undo',
      source: 'ui',
      details: { change: 'ch-3', undone: ['ch-2'] }
    });
    s = reduce(s, { type: 'event', event: redo });
    expect(status(s, edit)).toBe('written');
    expect(status(s, undo)).toBe('undone');
  });

  it('an accepted proposal whose change was undone reads "undone"', () => {
    let s = withEvents(held);
    s = reduce(s, {
      type: 'resolved',
      msg: {
        op: 'resolved',
        candidate: 'p2',
        status: 'written',
        text: '',
        by: 'ui',
        reason: 'accepted',
        change: 'ch-4'
      }
    });
    s = reduce(s, {
      type: 'event',
      event: ev('e10', {
        tool: 'undo',
        source: 'ui',
        details: { change: 'ch-5', undone: ['ch-4'] }
      })
    });
    expect(status(s, held)).toBe('undone');
  });

  it("a replayed proposal's outcome comes from the hello's resolved list", () => {
    const s = reduce(INITIAL_STATE, {
      type: 'hello',
      msg: {
        op: 'hello',
        protocol: 1,
        events: [held],
        pending: [],
        sessions: [],
        tools: [],
        resolved: [
          { candidate: 'p2', status: 'rejected', reason: 'rejected', by: 'widget', note: 'no' }
        ]
      }
    });
    const st = callStatus(s, held);
    expect(statusWords(st)).toBe('rejected by you');
    expect(st.note).toBe('no');
  });

  it("the agent's own withdrawal stays its own row; a person's decision without its proposal's row stays listed", () => {
    const withdraw = ev('e11', {
      args: { reject_repair: 'p2' },
      details: {
        resolved: { candidate: 'p2', status: 'rejected', reason: 'rejected', by: 'agent' }
      }
    });
    const orphan = ev('e12', {
      source: 'ui',
      args: { reject_repair: 'p7' },
      details: { resolved: { candidate: 'p7', status: 'rejected', reason: 'rejected', by: 'ui' } }
    });
    const s = reduce(withEvents(held, withdraw, orphan), {
      type: 'resolved',
      msg: {
        op: 'resolved',
        candidate: 'p2',
        status: 'rejected',
        text: '',
        by: 'agent',
        reason: 'rejected'
      }
    });
    expect(listedEvents(s.events).map(e => e.id)).toEqual(['e1', 'e11', 'e12']);
    expect(status(s, orphan)).toBe('rejected by you');
    expect(status(s, held)).toBe('rejected by the agent');
  });
});
