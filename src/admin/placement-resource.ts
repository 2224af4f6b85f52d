import type { ServicePlacementPolicy } from '../arcgis/placement-policy.js';
import { parseServiceName } from '../arcgis/service-name.js';
import type { AdminRequest } from './admin-request.js';
import { objectField } from './read-answer.js';
import type { AdminClient } from './types.js';
import { checkPlacementPolicy } from './validate-input.js';

/** A service's placement policy: the current one, and `placementPolicy/edit` after a whole-shape check. */
export function createPlacementResource(request: AdminRequest): AdminClient['placement'] {
  return {
    async get(service) {
      const path = `${parseServiceName(service).path}/placementPolicy`;
      const body = await request.send(path, {}, { idempotent: true });
      return objectField<ServicePlacementPolicy>(body, 'servicePlacementPolicy', request.urlOf(path));
    },
    async edit(service, policy, options = {}) {
      const path = `${parseServiceName(service).path}/placementPolicy/edit`;
      checkPlacementPolicy(policy);
      // `async` is the admin API's name for the flag (docs/admin.md#placement-policies); sent only when given.
      await request.send(path, { servicePlacementPolicy: policy, async: options.async }, { idempotent: false });
    },
  };
}
