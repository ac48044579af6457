export { keyPartition, murmur2 } from './key-partition.js';
