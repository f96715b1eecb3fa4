import type { JupyterFrontEndPlugin } from '@jupyterlab/application';
import { activityPlugin } from './plugins/activity';
import { rendererPlugin } from './plugins/renderer';

const plugins: JupyterFrontEndPlugin<void>[] = [rendererPlugin, activityPlugin];

export default plugins;
