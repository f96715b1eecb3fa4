/** Paths shown so that the file name stays visible in a narrow box. */
/**
 * Show an element's text as paths: elided from the left when it does not fit, so the file
 * name stays visible (an isolated left-to-right run in a right-to-left box, see base.css).
 */
export function pathText(el: Element | null, isPaths = true): void {
  if (el && isPaths) {
    const bdi = document.createElement('bdi');
    bdi.textContent = el.textContent;
    el.replaceChildren(bdi);
    el.classList.add('kli-Path');
  }
}
