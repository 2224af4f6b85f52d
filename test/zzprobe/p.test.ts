import t from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
t.test('p', async (t) => { t.comment(JSON.stringify([loadConfig({ PORT: ' ' }).port, loadConfig({ PORT: '0x1F90' }).port, loadConfig({ MAX_BODY_BYTES: '1e4' }).maxBodyBytes])); });
