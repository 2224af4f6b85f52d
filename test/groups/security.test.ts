import { runTestGroup } from '../helpers/test-group.js';

runTestGroup('security');
