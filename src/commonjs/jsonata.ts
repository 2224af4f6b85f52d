import type JSONata from 'jsonata';
import { requireDependency } from './require-dependency.js';

/** JSONata's compiler (`jsonata(expression)`), loaded with `require`. */
export const jsonata = requireDependency('jsonata') as typeof JSONata;
