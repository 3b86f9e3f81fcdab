import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { storeCredentials } from '../shared/platform/clients/credentials';
import { flushMetrics } from '../shared/platform/metrics';
import { kinds } from '../shared/sales/kinds';
import { reservationWriter } from '../shared/reservations/writer';

/** The reservation queue's consumer (see reservationWriter). */
const writeBatch = reservationWriter(kinds);

export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(flushMetrics())
  .use(storeCredentials())
  .handler((event) => writeBatch(event.Records));
