import { runTestGroup } from '../helpers/test-group.js';

runTestGroup('consumers');
