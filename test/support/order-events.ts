import { httpEvent } from './events';

export function orderEvent(itemId: string, cookie: string, idempotencyKey: string | undefined, body: unknown) {
  return httpEvent('post-sessions', {
    method: 'POST',
    path: `/items/${itemId}/orders`,
    pathParameters: { itemId },
    cookies: [cookie],
    headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
    body,
  });
}

export function getOrderEvent(orderId: string, cookie: string) {
  return httpEvent('get-me', { method: 'GET', path: `/orders/${orderId}`, pathParameters: { orderId }, cookies: [cookie] });
}
