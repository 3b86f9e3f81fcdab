/**
 * The MySQL driver as a bundle carries it: a file of its own beside the function's index.mjs
 * (infra/bundling.ts), loaded by mysqlDriver() with the first pool or connection.
 */
export { createConnection, createPool, format } from 'mysql2/promise';
