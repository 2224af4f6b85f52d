import { InvalidWhereError } from '../arcgis/where/where-error.js';
import { parseWhere, type Condition, type Literal, type Operand } from '../arcgis/where/where-parser.js';
import { fieldDomain } from '../arcgis/where/where-values.js';
import { compileTransitionWhere, type TransitionWhere } from '../arcgis/where/where.js';
import { nearestKey } from '../config/nearest-key.js';
import type { RouteFilterConfig, WhenValue } from '../config/route-filter.js';

/** A field as a layer definition gives it: name, ArcGIS type, and the codes of a coded-value domain. */
export interface CheckedField {
  name: string;
  type: string;
  codes?: readonly (string | number)[];
}

/** A layer a filter may be read on: its service, its definition, and the fields whose previous values are kept. */
export interface CheckedLayer {
  service: string;
  id: number;
  name: string;
  fields: readonly CheckedField[];
  /** CHANGES_TRACK, or the service's own `track`. */
  track: '*' | readonly string[];
}

/** A mistake that keeps a filter from ever matching: whose (`route "x"`), which part, its text, and what to do. */
export interface FilterIssue {
  owner: string;
  part: 'where' | 'changed' | 'when' | 'emit' | 'services' | 'layers';
  clause: string;
  message: string;
}

type LayerIssue = { part: FilterIssue['part']; clause: string; message: string; missing: boolean };

const layerName = (layer: CheckedLayer): string => `${layer.name} (${layer.service} layer ${layer.id})`;
const fieldOf = (layer: CheckedLayer, name: string): CheckedField | undefined =>
  layer.fields.find((field) => field.name.toLowerCase() === name.toLowerCase());
const codesText = (field: CheckedField): string => (field.codes ?? []).map((code) => `'${code}'`).join(', ');

/** Every comparison of a clause, with what each field is compared with (for the hint of a name that is no field). */
function comparisons(condition: Condition): { operand: Operand; other?: Operand | Literal[] }[] {
  switch (condition.type) {
    case 'and':
    case 'or':
      return condition.items.flatMap(comparisons);
    case 'not':
      return comparisons(condition.item);
    case 'compare':
      return [
        { operand: condition.left, other: condition.right },
        { operand: condition.right, other: condition.left },
      ];
    case 'in':
      return [{ operand: condition.operand, other: condition.values }];
    case 'like':
    case 'isNull':
      return [{ operand: condition.operand }];
  }
}

/** Why a name is no field, and the likeliest fix: the value it was meant to be (quoted), or the field it is near. */
function unknownFieldMessage(name: string, layer: CheckedLayer, condition: Condition | undefined): string {
  const lead = `\`${name}\` is not a field of ${layerName(layer)}`;
  const compared =
    condition === undefined ? [] : comparisons(condition).filter(({ operand }) => operand.type === 'field' && operand.name === name);
  const against = compared
    .map(({ other }) => (other !== undefined && !Array.isArray(other) && other.type === 'field' ? fieldOf(layer, other.name) : undefined))
    .find((field) => field !== undefined);
  const isCode = layer.fields.some((field) => field.codes?.some((code) => String(code) === name));
  if (isCode || (against !== undefined && fieldDomain(against.type) === 'text'))
    return `${lead}; did you mean '${name.replace(/'/g, "''")}'? (a value is quoted in single quotes)`;
  const near = nearestKey(
    name,
    layer.fields.map((field) => field.name),
  );
  if (near !== undefined) return `${lead}; did you mean ${near}?`;
  return `${lead}; its fields: ${layer.fields.map((field) => field.name).join(', ')}`;
}

/** A value written for a field that its coded-value domain does not hold (`=`, `<>` and `IN` only), as a message. */
function codeIssues(condition: Condition, layer: CheckedLayer): string[] {
  const issues: string[] = [];
  const check = (operand: Operand, values: readonly (Operand | Literal)[]): void => {
    if (operand.type !== 'field') return;
    const field = fieldOf(layer, operand.name);
    if (field?.codes === undefined || field.codes.length === 0) return;
    for (const value of values) {
      if (value.type !== 'string' && value.type !== 'number') continue;
      if (!field.codes.some((code) => String(code) === String(value.value)))
        issues.push(`'${String(value.value)}' is not a code of ${field.name} in ${layerName(layer)}: ${codesText(field)}`);
    }
  };
  const walk = (node: Condition): void => {
    if (node.type === 'and' || node.type === 'or') node.items.forEach(walk);
    else if (node.type === 'not') walk(node.item);
    else if (node.type === 'in') check(node.operand, node.values);
    else if (node.type === 'compare' && (node.op === '=' || node.op === '<>')) {
      check(node.left, [node.right]);
      check(node.right, [node.left]);
    }
  };
  walk(condition);
  return issues;
}

/** Whether geohook keeps the field's previous values: `*`, or the layer's own spelling in the list. */
function trackIssue(layer: CheckedLayer, name: string, why: string): string | undefined {
  if (layer.track === '*' || layer.track.includes(name)) return undefined;
  const spelled = layer.track.find((tracked) => tracked.toLowerCase() === name.toLowerCase());
  if (spelled !== undefined)
    return `${why} reads the previous value of ${name}, tracked as '${spelled}': CHANGES_TRACK names are exact: write '${name}'`;
  return `${why} reads the previous value of ${name}, which geohook does not keep: add ${name} to CHANGES_TRACK (or the service's track)`;
}

/** Whether `value` fits `field`: a number field takes numbers (or text that reads as one), a coded-value field its codes. */
function whenValueIssue(field: CheckedField, value: WhenValue | undefined, layer: CheckedLayer, key: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const domain = fieldDomain(field.type);
  if (domain === 'number' && (typeof value === 'string' ? !Number.isFinite(Number(value)) || value.trim() === '' : false))
    return `${key} '${value}' is not a number, and ${field.name} of ${layerName(layer)} is a ${field.type}`;
  if (domain === 'text' && typeof value === 'number')
    return `${key} ${value} is a number, and ${field.name} of ${layerName(layer)} is text: write "${value}"`;
  if (field.codes !== undefined && field.codes.length > 0 && !field.codes.some((code) => String(code) === String(value)))
    return `${key} '${value}' is not a code of ${field.name} in ${layerName(layer)}: ${codesText(field)}`;
  return undefined;
}

/** The mistakes of a filter on one layer; `missing`: the layer lacks a field it names (fine if another layer has them). */
function layerIssues(filter: RouteFilterConfig, layer: CheckedLayer): LayerIssue[] {
  const issues: LayerIssue[] = [];
  if (filter.where !== undefined) {
    const clause = filter.where;
    let parsed: Condition | undefined;
    let compiled: TransitionWhere | undefined;
    try {
      parsed = parseWhere(clause);
      compiled = compileTransitionWhere(clause, layer.fields);
    } catch (err) {
      if (!(err instanceof InvalidWhereError)) throw err;
      const missing = err.unknownField !== undefined;
      const message = missing ? unknownFieldMessage(err.unknownField!, layer, parsed) : `${err.message} (in ${layerName(layer)})`;
      issues.push({ part: 'where', clause, message, missing });
    }
    if (parsed !== undefined && compiled !== undefined) {
      for (const message of codeIssues(parsed, layer)) issues.push({ part: 'where', clause, message, missing: false });
      const tracked = [
        ...compiled.reads.before.map((name) => trackIssue(layer, name, `before.${name}`)),
        ...(filter.emit === undefined ? [] : compiled.reads.row.map((name) => trackIssue(layer, name, `emit "${filter.emit}"`))),
      ];
      for (const message of tracked) if (message !== undefined) issues.push({ part: 'where', clause, message, missing: false });
    }
  }
  for (const name of filter.changed ?? []) {
    const field = fieldOf(layer, name);
    const clause = JSON.stringify(filter.changed);
    const message = field === undefined ? unknownFieldMessage(name, layer, undefined) : trackIssue(layer, field.name, `changed "${name}"`);
    if (message !== undefined) issues.push({ part: 'changed', clause, message, missing: field === undefined });
  }
  if (filter.when !== undefined) {
    const clause = JSON.stringify(filter.when);
    const field = fieldOf(layer, filter.when.field);
    if (field === undefined)
      issues.push({ part: 'when', clause, message: unknownFieldMessage(filter.when.field, layer, undefined), missing: true });
    else {
      const messages = [
        trackIssue(layer, field.name, `when ${field.name}`),
        whenValueIssue(field, filter.when.from, layer, 'from'),
        whenValueIssue(field, filter.when.to, layer, 'to'),
      ];
      for (const message of messages) if (message !== undefined) issues.push({ part: 'when', clause, message, missing: false });
    }
  }
  return issues;
}

/** Every name a filter gives: the fields of its clause, of `changed` and of `when`. */
function namesOf(filter: RouteFilterConfig): string[] {
  let fromWhere: string[] = [];
  try {
    if (filter.where !== undefined)
      fromWhere = comparisons(parseWhere(filter.where)).flatMap(({ operand }) => (operand.type === 'field' ? [operand.name] : []));
  } catch {
    // A clause that does not parse names nothing; its own check says why.
  }
  return [...fromWhere, ...(filter.changed ?? []), ...(filter.when === undefined ? [] : [filter.when.field])];
}

/**
 * The mistakes that keep a route's or subscription's filter (`owner`: `route "x"`) from matching the layers it is for
 * (docs/relays.md#filters): the layers of its services (every followed one when it names none) and of its layer
 * ids. Only change events carry rows, so only the services followed for change events (`followed`) count. A clause
 * may name fields some layers lack (a related table): those layers are passed over, as the fan-out does, unless no
 * layer has them all. A wrong value, or a field not tracked, is a mistake on whichever layer it is.
 */
export function checkFilter(owner: string, filter: RouteFilterConfig, layers: readonly CheckedLayer[]): FilterIssue[] {
  if (filter.where === undefined && filter.changed === undefined && filter.when === undefined) return [];
  const issues: FilterIssue[] = [];
  const followed = [...new Set(layers.map((layer) => layer.service))];
  const services = filter.services ?? followed;
  for (const service of services.filter((name) => !followed.includes(name)))
    issues.push({
      owner,
      part: 'services',
      clause: service,
      message: `its where, changed and when read change events, and ${service} is not followed for them: add it to CHANGES`,
    });
  const inScope = layers.filter(
    (layer) => services.includes(layer.service) && (filter.layers === undefined || filter.layers.includes(layer.id)),
  );
  for (const id of filter.layers ?? [])
    if (!inScope.some((layer) => layer.id === id) && services.some((name) => followed.includes(name)))
      issues.push({ owner, part: 'layers', clause: String(id), message: `no followed service of this filter has a layer ${id}` });
  if (services.length > 0 && inScope.length === 0 && issues.length === 0)
    issues.push({ owner, part: 'services', clause: services.join(', '), message: 'no layer of these services is followed' });
  const perLayer = inScope.map((layer) => layerIssues(filter, layer));
  const wrong = perLayer.flat().filter((issue) => !issue.missing);
  // Named nowhere: said of the layer that has the most of the names the filter gives (the one it was meant for).
  const names = namesOf(filter);
  const known = inScope.map((layer) => names.filter((name) => fieldOf(layer, name) !== undefined).length);
  const meant = known.indexOf(Math.max(...known));
  const chosen = wrong.length > 0 ? wrong : perLayer.some((found) => found.length === 0) ? [] : (perLayer[meant] ?? []);
  const seen = new Set<string>();
  for (const { part, clause, message } of chosen) {
    if (seen.has(message)) continue;
    seen.add(message);
    issues.push({ owner, part, clause, message });
  }
  return issues;
}

/** An issue as one line: `route "closed" where "status = Closed": …`. */
export const formatFilterIssue = ({ owner, part, clause, message }: FilterIssue): string =>
  `${owner} ${part} ${part === 'where' ? JSON.stringify(clause) : clause}: ${message}`;
