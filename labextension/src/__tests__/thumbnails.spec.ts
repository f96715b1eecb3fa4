import { describe, expect, it } from 'vitest';
import { ROW_THUMBS, rowThumbnails } from '../model/thumbnails';
import type { IToolEvent } from '../protocol';

const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function event(images: IToolEvent['images']): IToolEvent {
  return { kind: 'call', id: 'e1', tool: 'look', ok: true, images };
}

describe('rowThumbnails', () => {
  it('gives each image its thumbnail and says what the model was shown', () => {
    const thumbs = rowThumbnails(
      event([
        {
          mime: 'image/png',
          width: 640,
          height: 480,
          bytes: 38000,
          label: 'nb.ipynb#k1 output [2]',
          thumbnail: PNG
        }
      ])
    );
    expect(thumbs).toEqual([
      {
        src: PNG,
        title:
          'The agent looked at nb.ipynb#k1 output [2]: image/png 640×480, 37 KB sent to the model'
      }
    ]);
  });

  it('shows nothing for a call without images, and no thumbnail that is not a data image', () => {
    expect(rowThumbnails({ kind: 'call', id: 'e2', tool: 'read', ok: true })).toEqual([]);
    expect(
      rowThumbnails(
        event([
          {
            mime: 'image/png',
            width: 1,
            height: 1,
            bytes: 1,
            label: 'x',
            thumbnail: 'https://example.org/a.png'
          },
          {
            mime: 'image/png',
            width: 1,
            height: 1,
            bytes: 1,
            label: 'y',
            thumbnail: 'data:text/html;base64,PGI+'
          },
          { mime: 'image/png', width: 1, height: 1, bytes: 1, label: 'z' }
        ])
      )
    ).toEqual([]);
  });

  it(`keeps at most ${ROW_THUMBS} on a row`, () => {
    const many = Array.from({ length: 6 }, (_, i) => ({
      mime: 'image/png',
      width: 10,
      height: 10,
      bytes: 100,
      label: `f${i}`,
      thumbnail: PNG
    }));
    expect(rowThumbnails(event(many)).map(t => t.title.split(':')[0])).toEqual(
      ['f0', 'f1', 'f2', 'f3'].map(l => `The agent looked at ${l}`)
    );
  });
});
