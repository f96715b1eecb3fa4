/**
 * The activity panel in the right sidebar, following the current notebook's kernel.
 *
 * Every token but the application is optional, so the plugin also loads in Notebook 7 (whose
 * notebook page has a right area too) and does nothing harmful where there is no notebook.
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { LabIcon } from '@jupyterlab/ui-components';
import { isKliKernel } from '../connection';
import { APPROVAL_KINDS, ActivityPanel } from '../widgets/activity';
import { keepPanelWidth } from '../widgets/panelwidth';

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M3 5h8v2H3zm0 6h5v2H3zm0 6h8v2H3z"/>
    <path d="M14 4l7 8-7 8-1.5-1.3L18.4 12l-5.9-6.7z"/>
  </g>
</svg>`;

export const activityIcon = new LabIcon({
  name: 'kli-kernel:activity',
  svgstr: ICON_SVG
});

/** Command that shows the panel (also in the command palette as "Show kli activity"). */
export const SHOW_COMMAND = 'kli-kernel:show-activity';

/** Command that shows the panel's Timeline (the recorded changes, with Undo). */
export const TIMELINE_COMMAND = 'kli-kernel:show-timeline';

/** Commands that switch review, per kind of action (`kli-kernel:review-file`…) or every kind. */
export const REVIEW_COMMAND = 'kli-kernel:review';

/** Command that keeps the review choice in the project's settings file (or this kernel only). */
export const KEEP_COMMAND = 'kli-kernel:keep-review';
export const BOX_COMMAND = 'kli-kernel:box';

/** `JupyterFrontEnd.name` of Notebook 7's application. */
const NOTEBOOK_APP_NAME = 'Jupyter Notebook';

export const activityPlugin: JupyterFrontEndPlugin<void> = {
  id: 'kli-kernel:activity',
  description: "The agent's activity: every tool call, pending repair previews, Accept / Reject.",
  autoStart: true,
  requires: [],
  optional: [INotebookTracker, IEditorLanguageRegistry, ILayoutRestorer, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker | null,
    languages: IEditorLanguageRegistry | null,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null
  ) => {
    const panel = new ActivityPanel(languages);
    panel.title.icon = activityIcon;
    app.shell.add(panel, 'right', { rank: 900 });
    keepPanelWidth(panel, 'kli-kernel:activity-width');
    restorer?.add(panel, panel.id);
    app.commands.addCommand(SHOW_COMMAND, {
      label: 'Show kli activity',
      caption: 'Show the kli activity panel: tool calls and pending repair previews',
      execute: () => app.shell.activateById(panel.id)
    });
    // Notebook 7 lists every side-panel widget in its palette itself ("Show <caption>", its
    // SidePanelPalette): a second entry of ours would show the same words twice.
    if (app.name !== NOTEBOOK_APP_NAME) {
      palette?.addItem({ command: SHOW_COMMAND, category: 'kli' });
    }
    addReviewCommands(app, panel, palette);

    let watched: NotebookPanel | null = null;
    const follow = (): void => {
      const nb = notebooks?.currentWidget ?? null;
      if (nb !== watched) {
        watched?.sessionContext.kernelChanged.disconnect(follow);
        watched = nb;
        nb?.sessionContext.kernelChanged.connect(follow);
      }
      const kernel = nb?.sessionContext.session?.kernel ?? null;
      if (!nb) {
        panel.setKernel(null, 'No notebook open.');
      } else if (!kernel) {
        panel.setKernel(null, `${nb.title.label}: no kernel.`);
      } else if (!isKliKernel(kernel)) {
        panel.setKernel(null, `${nb.title.label}: ${kernel.name} is not a kli kernel.`);
      } else {
        panel.setKernel(kernel, nb.title.label);
      }
    };
    notebooks?.currentChanged.connect(follow);
    follow();
  }
};

/**
 * The approval switch and the Timeline as commands (and palette items): one toggle per kind of
 * action and one for every kind, the Keep toggle, and "Show the kli Timeline". Each toggle
 * shows the current kernel's state; they are enabled only with a kli kernel's answer.
 */
function addReviewCommands(
  app: JupyterFrontEnd,
  panel: ActivityPanel,
  palette: ICommandPalette | null
): void {
  const ids: string[] = [];
  const toggle = (id: string, label: string, caption: string, kind: string | null): void => {
    app.commands.addCommand(id, {
      label,
      caption,
      isEnabled: () => panel.approvalReady,
      isToggled: () => panel.reviewing(kind),
      execute: () => panel.setReview(kind, !panel.reviewing(kind))
    });
    ids.push(id);
  };
  toggle(
    REVIEW_COMMAND,
    "Review an agent's calls before they run",
    "Hold each of an agent's changes to files, shell commands and Python evaluations until you accept or reject it",
    null
  );
  for (const [kind, , what] of APPROVAL_KINDS) {
    toggle(
      `${REVIEW_COMMAND}-${kind}`,
      `Review an agent's ${what} before they run`,
      `Hold each of an agent's ${what} until you accept or reject it`,
      kind
    );
  }
  app.commands.addCommand(KEEP_COMMAND, {
    label: 'Keep the review choice for this project',
    caption:
      "Keep the review switches in the project's settings file (.kli/settings.json), so a " +
      'restarted kernel and new notebooks start with them; off: this kernel only',
    isEnabled: () => panel.approvalReady,
    isToggled: () => panel.kept,
    execute: () => panel.setKeep(!panel.kept)
  });
  ids.push(KEEP_COMMAND);
  app.commands.addCommand(BOX_COMMAND, {
    label: "Run the agent's code in the box",
    caption:
      "Run the agent's shell commands and Python in a sandbox (bubblewrap): writes only in the " +
      'workspace root, no network, no new privileges (docs/sandbox.md); kept per project',
    isEnabled: () => panel.boxSwitchable,
    isToggled: () => panel.boxOn,
    execute: () => panel.setBox(!panel.boxOn)
  });
  ids.push(BOX_COMMAND);
  app.commands.addCommand(TIMELINE_COMMAND, {
    label: 'Show the kli Timeline',
    caption: "The recorded changes of this notebook's kernel, each with Undo",
    execute: () => {
      app.shell.activateById(panel.id);
      panel.showTimeline();
    }
  });
  ids.push(TIMELINE_COMMAND);
  panel.approvalChanged = () => {
    for (const id of ids) {
      app.commands.notifyCommandChanged(id);
    }
  };
  for (const command of ids) {
    palette?.addItem({ command, category: 'kli' });
  }
}
