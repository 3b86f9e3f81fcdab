/**
 * The Redis floor of a reservation as deployed (load/support/redis-floor.ts): the orders bench sets
 * the reservation script's Redis CPU per call beside one DECR's from a fleet of connections, each
 * carrying one call at a time as a Lambda instance does, so each call must go alone on a
 * connection, every connection must carry its share, and every call must run.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fleetOf, oneDecrFloor, redisCpuPerCallOnFleet } from '../../load/support/redis-floor';
import { shardsOf, type Shards } from '../../load/support/redis-shards';
import { redis } from '../../shared/platform/clients/redis';

let nodes: Shards;
beforeAll(async () => {
  nodes = await shardsOf(process.env.REDIS_URL!);
});
afterAll(() => nodes.close());

describe('the Redis floor as deployed', () => {
  it('carries one call at a time on each connection of the fleet, and makes every call', async () => {
    // Prepare
    const fleet = await fleetOf(5);
    const key = `{redis-floor:${process.pid}}:fleet`;
    const inFlight = new Map<unknown, number>();
    const most = new Map<unknown, number>();
    const made = new Set<number>();

    // Act
    const run = await redisCpuPerCallOnFleet(
      nodes.shards,
      fleet,
      200,
      async (connection, i) => {
        inFlight.set(connection, (inFlight.get(connection) ?? 0) + 1);
        most.set(connection, Math.max(most.get(connection) ?? 0, inFlight.get(connection)!));
        await connection.incr(key);
        inFlight.set(connection, inFlight.get(connection)! - 1);
        made.add(i);
      },
      'test fleet',
    );
    await fleet.close();

    // Assess
    expect(run.failures).toBe(0);
    expect(made.size).toBe(200);
    expect(Number(await redis().get(key))).toBe(200);
    expect([...most.keys()].length).toBe(5);
    expect([...most.values()]).toEqual([1, 1, 1, 1, 1]);
  });

  it("measures one DECR's floor through the fleet's connections", async () => {
    // Prepare
    const fleet = await fleetOf(4);
    const tag = `{redis-floor:${process.pid}:decr}`;
    const sent = fleet.connections.map((connection) => vi.spyOn(connection, 'evalsha'));

    // Act
    const floor = await oneDecrFloor(nodes.shards, tag, 8, 400, 50, fleet);
    await fleet.close();

    // Assess: the DECRs ran, on the key the floor set to twice the calls (the EVAL that loaded the script took one), each over the fleet
    expect(sent.map((spy) => spy.mock.calls.length > 0)).toEqual([true, true, true, true]);
    expect(sent.reduce((sum, spy) => sum + spy.mock.calls.length, 0)).toBe(400);
    expect(floor.failures).toBe(0);
    expect(floor.redis_ms_per_call).toBeGreaterThan(0);
    expect(Number(await redis().get(`${tag}:floor:0`))).toBe(399);
  });
});
