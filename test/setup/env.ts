import { inject } from 'vitest';

// Before any test file imports a handler, so module-scope config reads the test services.
Object.assign(process.env, inject('env'));
