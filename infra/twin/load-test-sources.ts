/** The twin's load-test allowance (LOAD_TEST_SOURCES): it serves loopback only, where benches and Artillery send from. */
export const TWIN_LOAD_TEST_SOURCES = '127.0.0.0/8';

/**
 * The client address of a reservation made straight through the domain (not through the API): a
 * loopback one, under the twin's load-test allowance that tests and benches run with.
 */
export const LOCAL_SOURCE = '127.0.0.1';
