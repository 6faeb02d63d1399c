// Builds Jaeger (test/support/jaeger.ts) once per `npm run test:tracing`, before any test file
// starts one: the first build takes minutes, and the files then find it in the cache.
import { buildJaeger } from '../../support/jaeger';

export default async function setup() {
  await buildJaeger();
}
