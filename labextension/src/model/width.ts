/**
 * The width a side panel opens at, and how a split panel's sizes make room for it. Pure.
 */

/** The activity panel's width (px) when none was remembered: rows, counts and paths fit. */
export const DEFAULT_PANEL_WIDTH = 420;

/** Never narrower than this, never more than this share of the split panel. */
export const MIN_PANEL_WIDTH = 240;
export const MAX_PANEL_SHARE = 0.6;

/** A remembered width (a stored string), or the default when there is none or it is not one. */
export function rememberedWidth(stored: string | null): number {
  const n = stored === null ? NaN : Number(stored);
  return Number.isFinite(n) && n >= MIN_PANEL_WIDTH ? Math.round(n) : DEFAULT_PANEL_WIDTH;
}

/**
 * The sizes (px) of a split panel's children with child `index` at `want` px: the difference
 * is taken from (or given to) the widest other child, which keeps at least MIN_PANEL_WIDTH.
 * Null when nothing can change (one child, no room).
 */
export function sizesWith(sizes: number[], index: number, want: number): number[] | null {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (sizes.length < 2 || index < 0 || index >= sizes.length || total <= 0) {
    return null;
  }
  let other = -1;
  sizes.forEach((s, i) => {
    if (i !== index && (other < 0 || s > sizes[other])) {
      other = i;
    }
  });
  const target = Math.max(MIN_PANEL_WIDTH, Math.min(want, total * MAX_PANEL_SHARE));
  const delta = Math.min(target - sizes[index], sizes[other] - MIN_PANEL_WIDTH);
  if (Math.abs(delta) < 1) {
    return null;
  }
  const next = [...sizes];
  next[index] += delta;
  next[other] -= delta;
  return next;
}
