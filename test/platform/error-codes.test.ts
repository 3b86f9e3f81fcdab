import { describe, expect, it } from 'vitest';
import { routesOfTable } from '../../infra/table-routes';
import { api, stackErrors } from '../../shared/api/api';
import { registerErrorCodes, registeredErrorCodes } from '../../shared/platform/errors';
import { registerScriptCodes, registeredScriptCodes } from '../../shared/platform/redis/script-codes';
import { capabilityCodeModules, importEveryCapabilitysCodes } from '../support/codes';

describe("the capabilities' codes", () => {
  // First, before anything imports every capability's codes: what the entries import registers what they declare.
  it('cover every code a route declares, registered by what its entry imports', async () => {
    // Act
    const routes = await routesOfTable();
    const declared = routes.flatMap((route) => [...stackErrors(route.api), ...route.api.errors]);

    // Assess
    expect(declared.length).toBeGreaterThan(20);
    expect([...new Set(declared)].filter((code) => !registeredErrorCodes().has(code))).toEqual([]);
  });

  it('are declared by each capability in its own codes.ts, and the platform declares only its own', async () => {
    // Act
    await importEveryCapabilitysCodes();

    // Assess: every owner but the platform is a capability with a codes.ts
    const owners = new Set([...registeredErrorCodes().values(), ...registeredScriptCodes().values()].map((entry) => entry.owner));
    expect([...owners].filter((owner) => owner !== 'platform').sort()).toEqual(capabilityCodeModules().map((path) => path.replace(/\/codes\.ts$/, '')));
    expect([...registeredErrorCodes()].filter(([, entry]) => entry.owner === 'platform').map(([code]) => code)).not.toContain('SOLD_OUT');
    expect([...registeredScriptCodes().values()].some((entry) => entry.owner === 'platform')).toBe(false);
  });

  it('are unique across capabilities: a code another has registered is refused', async () => {
    // Prepare
    await importEveryCapabilitysCodes();

    // Act and assess: the sale's error code and the rates' script code, claimed by another capability
    expect(() => registerErrorCodes('mail', { SOLD_OUT: 409 })).toThrow(/SOLD_OUT is reservations's; mail cannot register it/);
    expect(() => registerScriptCodes('mail', { signals: [-15] })).toThrow(/-15 is limits's; mail cannot register it/);
  });

  it('fail a route that declares a code no capability registered at its definition, its cold start, not at a request', () => {
    // Act and assess
    expect(() => api({ access: 'public', answers: {}, errors: ['NO_SUCH_CODE' as never] })).toThrow(/NO_SUCH_CODE is not registered/);
  });
});
