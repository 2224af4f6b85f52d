import type { Command } from 'commander';
import { explainPlacement } from '../../arcgis/explain-placement.js';
import { validatePlacementPolicy, type ServicePlacementPolicy } from '../../arcgis/placement-policy.js';
import { GeohookError } from '../../errors.js';
import { printResult } from '../print.js';
import { adminClientFrom, flagsOf, readJsonFile } from './flags.js';

function parseJsonFlag(text: string, flag: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new GeohookError('GEOHOOK_ERR_CONFIG', `${flag}: not valid JSON`);
  }
}

/** `geohook admin placement get|edit|explain`: a service's placement policy, and where it lets pods run. */
export function registerAdminPlacement(admin: Command): void {
  const placement = admin.command('placement').description("a service's placement policy (node affinity and tolerations)");
  placement
    .command('get')
    .argument('<service>')
    .action(async (service: string, _options: unknown, command: Command) => {
      const flags = flagsOf(command);
      printResult(await (await adminClientFrom(flags)).placement.get(service), flags);
    });
  placement
    .command('edit')
    .argument('<service>')
    .option('--file <policy.json>', 'the servicePlacementPolicy JSON, from a file')
    .option('--policy <json>', 'the servicePlacementPolicy JSON, inline')
    .option('--async', 'run the edit asynchronously')
    .action(async (service: string, _options: unknown, command: Command) => {
      const flags = flagsOf(command);
      if ((flags.file === undefined) === (flags.policy === undefined))
        throw new GeohookError('GEOHOOK_ERR_CONFIG', '--file or --policy: give exactly one');
      const policy = (
        flags.file === undefined ? parseJsonFlag(flags.policy as string, '--policy') : await readJsonFile(flags.file as string, '--file')
      ) as ServicePlacementPolicy;
      await (await adminClientFrom(flags)).placement.edit(service, policy, { async: flags.async === true });
      printResult({ status: 'success' }, flags);
    });
  placement
    .command('explain')
    .description('say on which nodes the pods of each deployment may run, and why not elsewhere (no server needed)')
    .requiredOption('--file <policy.json>', 'the servicePlacementPolicy JSON')
    .requiredOption('--nodes <nodes.json>', 'JSON array of {name, labels, taints}')
    .option('--deployment <id>', 'only this deploymentId')
    .action(async (_options: unknown, command: Command) => {
      const flags = flagsOf(command);
      const checked = validatePlacementPolicy(await readJsonFile(flags.file as string, '--file'));
      if (!checked.ok) throw new GeohookError('GEOHOOK_ERR_CONFIG', `--file: ${checked.errors.join('; ')}`);
      const nodes = await readJsonFile(flags.nodes as string, '--nodes');
      if (!Array.isArray(nodes)) throw new GeohookError('GEOHOOK_ERR_CONFIG', '--nodes: must be a JSON array of {name, labels, taints}');
      const entries = checked.policy.placementPolicy.filter(
        (entry) => flags.deployment === undefined || entry.deploymentId === flags.deployment,
      );
      const verdicts = entries.flatMap((entry) =>
        explainPlacement(entry, nodes).map((verdict) => ({
          deploymentId: entry.deploymentId,
          ...verdict,
          ...(flags.table ? { reasons: verdict.reasons.join('; ') } : {}),
        })),
      );
      printResult(verdicts, flags, ['deploymentId', 'node', 'schedulable', 'score', 'reasons']);
    });
}
