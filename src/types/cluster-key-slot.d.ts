// Types of `cluster-key-slot` (it ships none): Redis Cluster's hash slot of a key, as Redis
// computes it (CRC16 of the key's hash tag, modulo 16384).
declare module 'cluster-key-slot' {
  /** The hash slot of `key`, 0 to 16383. */
  function generate(key: string | Buffer): number;
  export default generate;
}
