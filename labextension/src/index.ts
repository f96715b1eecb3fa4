import type { JupyterFrontEndPlugin } from '@jupyterlab/application';
import { activityPlugin } from './plugins/activity';
import { connectPlugin } from './plugins/connect';
import { rendererPlugin } from './plugins/renderer';

const plugins: JupyterFrontEndPlugin<void>[] = [rendererPlugin, connectPlugin, activityPlugin];

export default plugins;
