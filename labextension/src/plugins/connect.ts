/**
 * Opens the `kli.ui` comm on the kernel of every notebook that runs a kli kernel, as soon as
 * the kernel is there: the kernel then knows a UI with this extension listens (so it does not
 * add its ipywidgets Accept / Reject fallback to previews), and the activity panel has the
 * history when it opens.
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { connectionFor, isKliKernel } from '../connection';

function watch(panel: NotebookPanel): void {
  const connect = (): void => {
    const kernel = panel.sessionContext.session?.kernel;
    if (kernel && isKliKernel(kernel)) {
      connectionFor(kernel).ensureOpen();
    }
  };
  panel.sessionContext.kernelChanged.connect(connect);
  void panel.sessionContext.ready.then(connect);
}

export const connectPlugin: JupyterFrontEndPlugin<void> = {
  id: 'kli-kernel:connect',
  description: 'Opens the kli.ui comm on every kli kernel of an open notebook.',
  autoStart: true,
  requires: [],
  optional: [INotebookTracker],
  activate: (app: JupyterFrontEnd, notebooks: INotebookTracker | null) => {
    notebooks?.forEach(watch);
    notebooks?.widgetAdded.connect((_, panel) => watch(panel));
  }
};
