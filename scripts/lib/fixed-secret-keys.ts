// The SECRET_KEYS of the tests and of the rows written straight into a database (test/support,
// the bookkeeping bench): one fixed key, so that every stack started on one database opens
// every secret any of them stored there. Shared here rather than in test/support so that the
// bench imports no test helper. Never a deployment's key: it is in the repository.
import { parseSecretKeys } from '../../src/config';
import { createSecretBox, type SecretBox } from '../../src/secret-keys';

export const FIXED_SECRET_KEYS = 'fixed-test-key:6C6jwibMOsyZhJiB2PgtCpbYcuQzgm/6JhzbN7dv4A8=';

export const fixedSecretBox = (): SecretBox => createSecretBox(parseSecretKeys(FIXED_SECRET_KEYS));
