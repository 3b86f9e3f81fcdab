import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { functionStack } from '../shared/platform/function-stack';
import { kinds } from '../shared/sale/kinds';
import { parkHandOff } from '../shared/reservations/parked';
import { reservationWriter } from '../shared/reservations/writer';

/** The reservation queue's consumer (see reservationWriter). */
const writeBatch = reservationWriter(kinds, parkHandOff);

export const handler = functionStack<SQSEvent, SQSBatchResponse>().handler((event) => writeBatch(event.Records));
