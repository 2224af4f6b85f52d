import { createAdminClient } from 'geohook';

// The admin root of the GIS server (`npm start` runs an emulator of it on port 7080).
const admin = createAdminClient({
  baseUrl: process.env.ADMIN_URL ?? 'http://127.0.0.1:7080/arcgis/admin',
  auth: { username: process.env.ADMIN_USERNAME ?? 'admin', password: process.env.ADMIN_PASSWORD ?? 'admin.pass' },
});

const webhook = await admin.webhooks.create('Tools/Buffer.GPServer', {
  name: 'buffer-done',
  hookUrl: process.env.HOOK_URL ?? 'http://127.0.0.1:8080/webhooks/default',
  signatureKey: process.env.HOOK_SECRETS?.split(',')[0] ?? 'my-signature-key',
  active: true,
});
console.log(`webhook ${webhook.id} on ${webhook.serviceName}: ${webhook.active ? 'active' : 'inactive'}`);

const services = await admin.findServices({ folderName: 'Hosted', serviceType: 'FeatureServer' });
console.log(`feature services: ${services.map((service) => service.serviceName).join(', ')}`);
