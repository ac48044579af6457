import { keyPartition } from '@banstream/core';
import type { ICustomPartitioner } from 'kafkajs';
import { kafkajs } from './kafkajs.js';

/**
 * kafkajs's DefaultPartitioner with keyPartition for keyed records: an explicit
 * partition wins, a keyed record goes where murmur2 puts it, a record without a key
 * goes round-robin as kafkajs does it.
 */
export const KeyPartitioner: ICustomPartitioner = () => {
  const unkeyed = kafkajs().Partitioners.DefaultPartitioner();
  return (args) => {
    const { message, partitionMetadata } = args;
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    if (message.key === null || message.key === undefined) return unkeyed(args);
    return keyPartition(message.key, partitionMetadata.length);
  };
};
