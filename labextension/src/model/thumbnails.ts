/**
 * What the agent looked at: the thumbnails a call event carries for the images its result
 * handed the model (`look`; the kernel's `ToolEvent.images`, docs/protocol.md). Pure: the
 * activity panel's row shows them (widgets/activity.ts).
 */
import type { IToolEvent } from '../protocol';

/** At most this many thumbnails on one row (a call hands the model at most 4 images). */
export const ROW_THUMBS = 4;

/** Only an image the kernel made: a `data:` URL of a PNG or JPEG, nothing to fetch. */
const DATA_IMAGE = /^data:image\/(png|jpeg);base64,[A-Za-z0-9+/=]+$/;

export interface IRowThumb {
  /** the thumbnail, a `data:image/png;base64,…` URL */
  src: string;
  /** what the model was shown, for a hover and for a screen reader */
  title: string;
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${Math.round(bytes / 1024)} KB`;
}

/** The thumbnails of `event`'s images, in order; an image without a usable thumbnail is
 * left out (its size is still in the row's text). */
export function rowThumbnails(event: IToolEvent): IRowThumb[] {
  const out: IRowThumb[] = [];
  for (const image of event.images ?? []) {
    const src = typeof image.thumbnail === 'string' ? image.thumbnail : '';
    if (!DATA_IMAGE.test(src) || out.length >= ROW_THUMBS) {
      continue;
    }
    const what = image.label ? `${image.label}: ` : '';
    out.push({
      src,
      title: `The agent looked at ${what}${image.mime} ${image.width}×${image.height}, ${size(
        image.bytes
      )} sent to the model`
    });
  }
  return out;
}
