import { Redis } from 'ioredis';
import { readServiceReports, type ServiceReport } from '../../src/queue/service-report.js';

/** What the services view shows under `prefix`, read over a connection of its own. */
export async function serviceReports(redisUrl: string, prefix: string): Promise<ServiceReport[]> {
  const connection = new Redis(redisUrl);
  try {
    return await readServiceReports(connection, prefix);
  } finally {
    connection.disconnect();
  }
}
