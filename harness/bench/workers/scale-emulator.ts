import { buildEmulator } from '../../../src/emulator/build-emulator.js';
import { notifyParent, serveParent } from '../ipc.js';
import { scaleCatalog } from '../scale/scale-catalog.js';

/** The emulator in a process of its own, serving `Scale/Svc<n>.FeatureServer` for n below the first argument. */
const app = await buildEmulator({ logLevel: 'warn', catalog: scaleCatalog(Number(process.argv[2])) });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
serveParent({ close: () => app.close() });
notifyParent('ready', { port: typeof address === 'object' && address !== null ? address.port : 0 });
