import { describe, expect, it } from 'vitest';
import {
  INITIAL_STATE,
  MAX_EVENTS,
  IActivityState,
  candidatesOf,
  reduce,
  toolsSeen,
  visibleEvents,
  visiblePending
} from '../model/store';
import type { IFileChange, IToolEvent } from '../protocol';

function ev(id: string, over: Partial<IToolEvent> = {}): IToolEvent {
  return {
    kind: 'call',
    id,
    tool: 'read',
    ok: true,
    session: 's1',
    session_label: 'default',
    ...over
  };
}

const previewFile: IFileChange = {
  path: 'a.lisp',
  status: 'preview',
  before: '(a',
  after: '(a)',
  candidate: 'c4',
  reason: 'form_count_changed',
  message: 'forms 1 → 2'
};

describe('reduce', () => {
  it('hello replaces events, pending and sessions and marks the state ready', () => {
    const s = reduce(INITIAL_STATE, {
      type: 'hello',
      msg: {
        op: 'hello',
        events: [ev('e1'), ev('e2', { session: 's3', session_label: 'agent' })],
        pending: [{ candidate: 'c1', path: 'x.lisp' }],
        sessions: [{ id: 's1', label: 'default' }]
      }
    });
    expect(s.ready).toBe(true);
    expect(s.events.map(e => e.id)).toEqual(['e1', 'e2']);
    expect(s.pending.map(c => c.candidate)).toEqual(['c1']);
    expect(s.sessions).toEqual([
      { id: 's1', label: 'default' },
      { id: 's3', label: 'agent' }
    ]);
  });

  it("hello's tools give each tool's summary arguments", () => {
    const s = reduce(INITIAL_STATE, {
      type: 'hello',
      msg: {
        op: 'hello',
        protocol: 1,
        events: [],
        pending: [],
        sessions: [],
        tools: [
          { name: 'bash', profile: 'kli', main_arg: 'command', summary_args: ['command'] },
          { name: 'find', profile: 'kli', main_arg: 'pattern', summary_args: ['path', 'pattern'] }
        ]
      }
    });
    expect(s.summaryArgs).toEqual({ bash: ['command'], find: ['path', 'pattern'] });
  });

  it('appends events once, learning new sessions', () => {
    let s = reduce(INITIAL_STATE, { type: 'event', event: ev('e1') });
    s = reduce(s, { type: 'event', event: ev('e1') });
    s = reduce(s, {
      type: 'event',
      event: ev('e2', { session: 's2', session_label: 'bot' })
    });
    expect(s.events.map(e => e.id)).toEqual(['e1', 'e2']);
    expect(s.sessions.map(x => x.label)).toEqual(['default', 'bot']);
  });

  it('keeps at most MAX_EVENTS, dropping the oldest', () => {
    let s: IActivityState = INITIAL_STATE;
    for (let i = 0; i < MAX_EVENTS + 5; i++) {
      s = reduce(s, { type: 'event', event: ev(`e${i}`) });
    }
    expect(s.events.length).toBe(MAX_EVENTS);
    expect(s.events[0].id).toBe('e5');
  });

  it('an event with a preview adds a pending candidate that resolved removes', () => {
    let s = reduce(INITIAL_STATE, {
      type: 'event',
      event: ev('e1', { tool: 'edit', details: { files: [previewFile] } })
    });
    expect(s.pending).toMatchObject([
      {
        candidate: 'c4',
        path: 'a.lisp',
        session: 's1',
        reason: 'form_count_changed'
      }
    ]);
    s = reduce(s, {
      type: 'resolved',
      msg: {
        op: 'resolved',
        candidate: 'c4',
        status: 'written',
        text: 'ok',
        by: 'agent'
      }
    });
    expect(s.pending).toEqual([]);
    expect(s.resolved.c4).toEqual({
      status: 'written',
      text: 'ok',
      by: 'agent'
    });
  });

  it('does not re-add a candidate already resolved when its event replays late', () => {
    let s = reduce(INITIAL_STATE, {
      type: 'resolved',
      msg: { op: 'resolved', candidate: 'c4', status: 'rejected' }
    });
    s = reduce(s, {
      type: 'event',
      event: ev('e1', { details: { files: [previewFile] } })
    });
    expect(s.pending).toEqual([]);
  });

  it('reset forgets everything', () => {
    const s = reduce(reduce(INITIAL_STATE, { type: 'event', event: ev('e1') }), { type: 'reset' });
    expect(s).toEqual(INITIAL_STATE);
  });
});

describe('candidatesOf', () => {
  it('ignores written files and previews without a candidate id', () => {
    const e = ev('e1', {
      details: {
        files: [
          { path: 'a.py', status: 'written', candidate: null },
          { ...previewFile, candidate: null },
          previewFile
        ]
      }
    });
    expect(candidatesOf(e).map(c => c.candidate)).toEqual(['c4']);
  });
});

describe('filters', () => {
  const s = reduce(INITIAL_STATE, {
    type: 'hello',
    msg: {
      op: 'hello',
      events: [
        ev('e1', { tool: 'bash' }),
        ev('e2', { tool: 'edit', session: 's2' }),
        ev('e3', { tool: 'bash', session: 's2' })
      ],
      pending: [
        { candidate: 'c1', path: 'a', session: 's1' },
        { candidate: 'c2', path: 'b', session: 's2' }
      ]
    }
  });

  it('lists matching events newest first', () => {
    expect(visibleEvents(s, { session: '', tool: '' }).map(e => e.id)).toEqual(['e3', 'e2', 'e1']);
    expect(visibleEvents(s, { session: 's2', tool: '' }).map(e => e.id)).toEqual(['e3', 'e2']);
    expect(visibleEvents(s, { session: 's2', tool: 'bash' }).map(e => e.id)).toEqual(['e3']);
    expect(visibleEvents(s, { session: '', tool: 'edit' }).map(e => e.id)).toEqual(['e2']);
  });

  it('filters pending candidates by session only', () => {
    expect(visiblePending(s, { session: 's2', tool: 'bash' }).map(c => c.candidate)).toEqual([
      'c2'
    ]);
  });

  it('offers each tool seen once, sorted', () => {
    expect(toolsSeen(s)).toEqual(['bash', 'edit']);
  });
});

describe('review queue', () => {
  const held = {
    candidate: 'p3',
    kind: 'call',
    path: '',
    session: 's2',
    session_label: 'bot',
    tool: 'bash',
    action: 'shell',
    command: 'rm -rf build'
  };
  const ready = reduce(INITIAL_STATE, {
    type: 'hello',
    msg: {
      op: 'hello',
      protocol: 1,
      events: [],
      pending: [],
      sessions: [],
      tools: [],
      approval: { file: 'review', shell: 'auto', eval: 'auto' }
    }
  });

  it('hello carries the approval modes and an approval message replaces them', () => {
    expect(ready.approval).toEqual({ file: 'review', shell: 'auto', eval: 'auto' });
    const s = reduce(ready, { type: 'approval', approval: { file: 'auto', shell: 'review' } });
    expect(s.approval).toEqual({ file: 'auto', shell: 'review' });
  });

  it('knows where the modes come from: said by the hello, then by each approval message', () => {
    const kept = reduce(INITIAL_STATE, {
      type: 'hello',
      msg: {
        op: 'hello',
        protocol: 1,
        events: [],
        pending: [],
        sessions: [],
        tools: [],
        approval: { file: 'review', shell: 'review', eval: 'review' },
        approval_origin: 'kept',
        approval_kept: '/p/.kli/settings.json',
        approval_said: 'kept in .kli/settings.json'
      }
    });
    expect(kept.approvalOrigin).toEqual({
      origin: 'kept',
      kept: '/p/.kli/settings.json',
      said: 'kept in .kli/settings.json'
    });
    const live = reduce(kept, {
      type: 'approval',
      approval: { file: 'auto', shell: 'review', eval: 'review' },
      origin: { origin: 'kernel', said: 'this kernel only: a restart forgets it' }
    });
    expect(live.approvalOrigin).toEqual({
      origin: 'kernel',
      kept: '',
      said: 'this kernel only: a restart forgets it'
    });
    // An older kernel's message says nothing of it: what was known stays.
    const older = reduce(live, { type: 'approval', approval: { file: 'review' } });
    expect(older.approvalOrigin).toEqual(live.approvalOrigin);
    expect(ready.approvalOrigin).toEqual({ origin: '', kept: '', said: '' });
  });

  it('a proposed held call joins the one queue once, and its session is known', () => {
    let s = reduce(ready, { type: 'proposed', candidate: held });
    s = reduce(s, { type: 'proposed', candidate: { ...held, command: 'rm -rf dist' } });
    expect(s.pending.map(c => c.candidate)).toEqual(['p3']);
    expect(s.pending[0].command).toBe('rm -rf dist');
    expect(s.sessions.map(x => x.id)).toEqual(['s2']);
  });

  it('expired marks the proposals of a closed session and keeps them pending', () => {
    let s = reduce(ready, { type: 'proposed', candidate: held });
    s = reduce(s, {
      type: 'expired',
      msg: {
        op: 'expired',
        candidates: ['p3'],
        session: 's2',
        session_label: 'bot',
        text: 'expired — bot disconnected'
      }
    });
    expect(s.pending[0].expired).toBe('expired — bot disconnected');
  });

  it('the file filter keeps the proposals that change that file, held multi-file calls too', () => {
    const multi = {
      candidate: 'p4',
      kind: 'call',
      path: 'a.py',
      files: [
        { path: 'a.py', status: 'preview' },
        { path: 'b.py', status: 'preview' }
      ]
    };
    let s = reduce(ready, { type: 'proposed', candidate: held });
    s = reduce(s, { type: 'proposed', candidate: multi });
    expect(
      visiblePending(s, { session: '', tool: '', path: 'b.py' }).map(c => c.candidate)
    ).toEqual(['p4']);
    expect(visiblePending(s, { session: 's2', tool: '' }).map(c => c.candidate)).toEqual(['p3']);
  });

  it('a resolved proposal leaves the queue and a late proposed for it is ignored', () => {
    let s = reduce(ready, { type: 'proposed', candidate: held });
    s = reduce(s, {
      type: 'resolved',
      msg: {
        op: 'resolved',
        candidate: 'p3',
        status: 'rejected',
        text: '',
        by: 'ui',
        reason: 'rejected'
      }
    });
    s = reduce(s, { type: 'proposed', candidate: held });
    expect(s.pending).toEqual([]);
  });
});

describe('the box', () => {
  const off = {
    mode: 'off' as const,
    network: 'off' as const,
    state: 'off',
    said: 'off: an agent’s shell and eval run with your full powers',
    stops: ['writes outside the workspace root'],
    does_not_stop: ['a hostile binary with a Linux kernel exploit']
  };

  it('is unknown until a kernel says it, then the hello carries it', () => {
    expect(INITIAL_STATE.box).toBeNull();
    const s = reduce(INITIAL_STATE, {
      type: 'hello',
      msg: {
        op: 'hello',
        v: 1,
        protocol: 1,
        events: [],
        pending: [],
        sessions: [],
        tools: [],
        sandbox: off
      }
    });
    expect(s.box).toEqual(off);
  });

  it('a sandbox message replaces it (a box that could not be made included)', () => {
    const failed = { ...off, mode: 'on' as const, state: 'unavailable', reason: 'no bwrap' };
    const s = reduce({ ...INITIAL_STATE, box: off }, { type: 'sandbox', box: failed });
    expect(s.box?.state).toBe('unavailable');
    expect(s.box?.reason).toBe('no bwrap');
  });
});
