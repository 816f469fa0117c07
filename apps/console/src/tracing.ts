// The first import: the SDK instruments the modules loaded after it (docs/operations/tracing.md).
import { startTracing } from '@app/platform/tracing';

startTracing('console');
