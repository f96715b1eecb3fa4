/**
 * Shows on each cell of an open notebook the changes the tools made to it, or propose: the
 * diff of an applied edit, and a pending proposal's diff with Accept / Reject
 * (widgets/celldiff.ts). Optional tokens only, so it also loads where there is no notebook.
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker } from '@jupyterlab/notebook';
import { KliConnections, NotebookCellDiffs } from '../widgets/celldiff';

export const cellDiffPlugin: JupyterFrontEndPlugin<void> = {
  id: 'kli-kernel:cell-diff',
  description: "Shows a cell's diff on the cell itself, with Accept / Reject for proposals.",
  autoStart: true,
  requires: [],
  optional: [INotebookTracker, IEditorLanguageRegistry],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker | null,
    languages: IEditorLanguageRegistry | null
  ) => {
    if (!notebooks) {
      return;
    }
    const connections = new KliConnections(notebooks);
    notebooks.forEach(panel => new NotebookCellDiffs(panel, languages, connections));
    notebooks.widgetAdded.connect(
      (_, panel) => new NotebookCellDiffs(panel, languages, connections)
    );
  }
};
