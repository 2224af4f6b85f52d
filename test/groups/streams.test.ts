import { runTestGroup } from '../helpers/test-group.js';

runTestGroup('streams');
