/**
 * A side panel that opens at a usable width and keeps the width a person gave it across
 * reloads (localStorage): the first time the panel is shown in a page it gets the remembered
 * width (DEFAULT_PANEL_WIDTH at first); every later resize is remembered.
 */
import { SplitPanel, Widget } from '@lumino/widgets';
import { rememberedWidth, sizesWith } from '../model/width';

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null; // storage refused (a sandboxed frame): the default width, not remembered
  }
}

/** The split panel that sizes `widget`'s side area, and the index of that area in it. */
function splitOf(widget: Widget): [SplitPanel, number] | null {
  let child: Widget = widget;
  for (let p = widget.parent; p; child = p, p = p.parent) {
    if (p instanceof SplitPanel) {
      return [p, p.widgets.indexOf(child)];
    }
  }
  return null;
}

export function keepPanelWidth(widget: Widget, key: string): void {
  if (typeof ResizeObserver === 'undefined') {
    return;
  }
  let placed = false;
  let timer = 0;
  const observer = new ResizeObserver(() => {
    const width = widget.node.getBoundingClientRect().width;
    if (!width) {
      return; // hidden: the sidebar is collapsed or shows another panel
    }
    if (!placed) {
      placed = true;
      const found = splitOf(widget);
      if (found) {
        const [split, index] = found;
        const total = split.node.getBoundingClientRect().width;
        const sizes = split.relativeSizes().map(s => s * total);
        const next = sizesWith(sizes, index, rememberedWidth(storage()?.getItem(key) ?? null));
        if (next) {
          split.setRelativeSizes(next.map(s => s / total));
          return;
        }
      }
    }
    window.clearTimeout(timer);
    timer = window.setTimeout(() => storage()?.setItem(key, String(Math.round(width))), 300);
  });
  observer.observe(widget.node);
  widget.disposed.connect(() => observer.disconnect());
}
