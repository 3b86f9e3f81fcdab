import { describeTwinMetrics } from '../support/twin-metrics';

describeTwinMetrics('bundles');
