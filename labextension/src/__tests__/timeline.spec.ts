import { describe, expect, it } from 'vitest';
import {
  changesKey,
  groupBySession,
  ofNotebook,
  sessionWho,
  sinceScope,
  timelineStatus,
  toEntry,
  undoScope,
  wholeSession
} from '../model/timeline';
import type { IChangeInfo, IToolEvent } from '../protocol';

function change(id: string, time: number, extra: Partial<IChangeInfo> = {}): IChangeInfo {
  return {
    id,
    tool: 'edit',
    session: 's1',
    session_label: 'agent',
    time,
    files: [
      {
        path: `src/${id}.py`,
        existed: true,
        kept: true,
        after_exists: true,
        checkpoint: `cp-${id}`,
        added: 2,
        removed: 1
      }
    ],
    ...extra
  };
}

describe('groupBySession', () => {
  it('puts each session in time order, oldest first, from the newest-first reply', () => {
    const groups = groupBySession([
      change('c', 30),
      change('m', 25, { session: 's0', session_label: 'magic', tool: 'undo', undone: ['b'] }),
      change('b', 20, { undone_by: 'm' }),
      change('a', 10)
    ]);
    expect(groups.map(g => g.label)).toEqual(['agent', 'magic']);
    expect(groups[0].entries.map(e => e.id)).toEqual(['a', 'b', 'c']);
    expect(groups[1].title).toContain('Your magics');
    expect(groups[0].entries[1].undoneBy).toBe('m');
    expect(groups[1].entries[0].undoes).toEqual(['b']);
  });

  it('titles each session with who and the notebook it ran from, and two magics apart', () => {
    const groups = groupBySession([
      change('b', 20, { session: 's1-bb', session_label: 'magic', notebook: 'two.ipynb' }),
      change('a', 10, { session: 's1-aa', session_label: 'magic', notebook: 'one.ipynb' }),
      change('c', 5, { session: 's2-aa', session_label: 'helper', notebook: 'one.ipynb' })
    ]);
    expect(groups.map(g => [g.session, g.title])).toEqual([
      ['s1-bb', 'Your magics and the panel — two.ipynb'],
      ['s1-aa', 'Your magics and the panel — one.ipynb'],
      ['s2-aa', 'helper — one.ipynb']
    ]);
  });

  it('names the files a session changed when no notebook is known', () => {
    const files = ['a', 'b', 'c', 'd', 'e'].map(p => ({
      path: p,
      existed: true,
      kept: true,
      after_exists: true,
      checkpoint: `cp-${p}`
    }));
    const [one] = groupBySession([change('x', 1, { session_label: 'cli', files })]);
    expect(one.title).toBe('cli — a, b, c and 2 more');
  });
});

describe('the Timeline of one notebook', () => {
  const changes = [
    change('b2', 40, { notebook: 'two.ipynb', session: 's9' }),
    change('a2', 30, { notebook: 'one.ipynb' }),
    change('cli', 20, { notebook: null, session: 's8' }),
    change('a1', 10, { notebook: 'one.ipynb' })
  ];

  it("shows that notebook's changes and counts the others it leaves out", () => {
    const { shown, others } = ofNotebook(changes, 'one.ipynb', false);
    expect(shown.map(c => c.id)).toEqual(['a2', 'a1']);
    expect(others).toBe(2);
    expect(
      timelineStatus({
        notebook: 'one.ipynb',
        all: false,
        shown: 2,
        sessions: 1,
        others: 2,
        total: 4,
        received: 4
      })
    ).toBe(
      '2 changes made from one.ipynb, 1 session; 2 changes from other notebooks or tools in this folder not shown.'
    );
  });

  it('shows every change of the folder when asked, and says so', () => {
    const { shown, others } = ofNotebook(changes, 'one.ipynb', true);
    expect(shown.map(c => c.id)).toEqual(['b2', 'a2', 'cli', 'a1']);
    expect(
      timelineStatus({
        notebook: 'one.ipynb',
        all: true,
        shown: shown.length,
        sessions: 3,
        others,
        total: 4,
        received: 4
      })
    ).toMatch(/^Every change in this folder: 4 changes, 3 sessions, 2 of them from other/);
  });

  it('shows everything, saying why, for a kernel started for no notebook', () => {
    expect(ofNotebook(changes, null, false)).toEqual({ shown: changes, others: 0 });
    expect(
      timelineStatus({
        notebook: null,
        all: false,
        shown: 4,
        sessions: 3,
        others: 0,
        total: 4,
        received: 4
      })
    ).toContain('not started for a notebook');
  });
});

describe('toEntry', () => {
  it('sums the counts the kernel gave and names created and deleted files', () => {
    const e = toEntry(
      change('x', 1, {
        files: [
          {
            path: 'a',
            existed: false,
            kept: true,
            after_exists: true,
            checkpoint: 'p',
            added: 3,
            removed: 0
          },
          {
            path: 'b',
            existed: true,
            kept: true,
            after_exists: false,
            checkpoint: 'q',
            added: 0,
            removed: 2
          }
        ]
      })
    );
    expect(e.counts).toBe('+3 −2');
    expect(e.files.map(f => f.kind)).toEqual(['created', 'deleted']);
  });

  it('shows no counts rather than zero when the kernel could not count', () => {
    const e = toEntry(
      change('x', 1, {
        files: [{ path: 'a', existed: true, kept: false, after_exists: true, checkpoint: 'p' }]
      })
    );
    expect(e.counts).toBe('');
    expect(e.files[0].counts).toBe('');
  });

  it('says what an undo took back and who undid a change', () => {
    expect(toEntry(change('u', 1, { tool: 'undo', undone: ['a', 'b'] })).note).toBe(
      'undoes 2 changes'
    );
    expect(toEntry(change('u', 1, { tool: 'undo', undoes: 'a' })).note).toBe('undoes a');
    expect(toEntry(change('a', 1, { undone_by: 'u' })).note).toBe('undone by u');
  });

  it('says who undid a change: you (the Timeline, a magic) or the chat persona that did', () => {
    const [you, agent] = groupBySession([
      change('u', 20, { session: 's0', session_label: 'magic', tool: 'undo', undone: ['a'] }),
      change('a', 10, { undone_by: 'u' })
    ]);
    expect(agent.entries[0].note).toBe('undone by you (u)');
    expect(you.title).toMatch(/^Your magics and the panel/);
    const [chat] = groupBySession([
      change('k', 20, {
        session: 's7',
        session_label: 'kli in chat a.chat (undoing turn 2)',
        tool: 'undo',
        undone: ['b']
      }),
      change('b', 10, { session: 's6', session_label: 'chat a.chat turn 2', undone_by: 'k' })
    ]).filter(g => g.session === 's6');
    expect(chat.entries[0].note).toBe('undone by kli in chat a.chat (undoing turn 2) (k)');
    expect(chat.entries[0].note).not.toContain('(undo) (undo)');
  });

  it('names the person by what they pressed, an agent by its label', () => {
    expect(sessionWho('magic', 'ui')).toBe('you, from the kli panel');
    expect(sessionWho('magic', 'magic')).toBe('you');
    expect(sessionWho('magic')).toBe('you');
    expect(sessionWho('kli in chat a.chat (undoing turn 2)', 'agent')).toBe(
      'kli in chat a.chat (undoing turn 2)'
    );
  });
});

describe('the buttons', () => {
  it('undo a standing change, and redo an undone one by undoing its undo', () => {
    expect(undoScope(toEntry(change('a', 1)))).toEqual({ change: 'a' });
    expect(undoScope(toEntry(change('a', 1, { undone_by: 'u' })))).toEqual({ change: 'u' });
  });

  it('undo everything since an entry of its session, at its exact time', () => {
    const [group] = groupBySession([change('a', 1764590000.123456)]);
    expect(sinceScope(group, group.entries[0])).toEqual({
      session: 's1',
      since: '1764590000.123456'
    });
  });
});

describe('changesKey', () => {
  const ev = (id: string, change?: string): IToolEvent => ({
    kind: 'call',
    id,
    tool: 'bash',
    ok: true,
    details: change ? { change } : {}
  });

  it('changes when a call records a change, not for other calls', () => {
    const before = changesKey([ev('e1', 'ch-1')]);
    expect(changesKey([ev('e1', 'ch-1'), ev('e2')])).toBe(before);
    expect(changesKey([ev('e1', 'ch-1'), ev('e2'), ev('e3', 'ch-2')])).not.toBe(before);
  });
});

describe('an image part', () => {
  it('says in the note what undo cannot put back', () => {
    const entry = toEntry(
      change('c9', 40, {
        files: [
          {
            path: 'image: df, x',
            existed: true,
            kept: true,
            after_exists: true,
            checkpoint: 'cp-c9',
            kind: 'image',
            part: {
              not_kept: ['df was changed in place and is too large to restore: re-run cell c3']
            }
          }
        ]
      })
    );
    expect(entry.note).toBe(
      'undo cannot put back: df was changed in place and is too large to restore: re-run cell c3'
    );
    expect(entry.files.map(f => f.path)).toEqual(['image: df, x']);
  });
});

describe('wholeSession', () => {
  it('offers to undo a chat turn whole, from its oldest change', () => {
    const [group] = groupBySession([
      change('c7', 30, { session: 's9', session_label: 'chat team.chat turn 2' }),
      change('c5', 10, { session: 's9', session_label: 'chat team.chat turn 2' })
    ]);
    const whole = wholeSession(group);
    expect(whole.words).toBe('Undo this turn');
    expect(whole.scope).toEqual({ session: 's9', since: '10' });
    expect(whole.title).toMatch(/chat team\.chat turn 2 changed, in one step/);
  });

  it('offers nothing for a turn whose every change is undone already', () => {
    const [group] = groupBySession([
      change('c7', 30, { session: 's9', session_label: 'chat team.chat turn 2', undone_by: 'u2' }),
      change('c5', 10, { session: 's9', session_label: 'chat team.chat turn 2', undone_by: 'u2' })
    ]);
    expect(wholeSession(group).scope).toBeNull();
    const [half] = groupBySession([
      change('c7', 30, { session: 's9', session_label: 'chat team.chat turn 2' }),
      change('c5', 10, { session: 's9', session_label: 'chat team.chat turn 2', undone_by: 'u1' })
    ]);
    expect(wholeSession(half).scope).toEqual({ session: 's9', since: '10' });
  });

  it('calls any other session a session', () => {
    const [group] = groupBySession([change('c1', 5)]);
    expect(wholeSession(group).words).toBe('Undo this session');
    expect(wholeSession(group).scope).toEqual({ session: 's1', since: '5' });
  });
});
