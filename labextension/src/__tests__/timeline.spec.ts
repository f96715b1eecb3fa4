import { describe, expect, it } from 'vitest';
import { changesKey, groupBySession, sinceScope, toEntry, undoScope } from '../model/timeline';
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
