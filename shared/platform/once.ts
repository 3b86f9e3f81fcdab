/**
 * A value made on first use and kept for the instance's life: how module-scope clients and
 * settings are held, so importing a module reads no environment and opens no connection.
 */
export function once<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}
