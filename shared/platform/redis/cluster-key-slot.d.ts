/** cluster-key-slot (ioredis's own dependency) ships no types: Redis Cluster's CRC16 slot of a key, hash tags honoured. */
declare module 'cluster-key-slot' {
  function generate(key: string | Buffer): number;
  export default generate;
}
