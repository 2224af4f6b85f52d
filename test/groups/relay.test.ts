import { runTestGroup } from '../helpers/test-group.js';

runTestGroup('relay');
