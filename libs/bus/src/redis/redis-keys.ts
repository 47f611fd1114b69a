/**
 * Key layout of the Redis Streams bus. Everything of a topic starts with the topic name, so tools
 * (and tests) can find or delete a topic's keys with one pattern.
 */
export const redisKeys = {
  /** One stream per partition: one key's events stay in one stream. */
  stream: (topic: string, partition: number) => `${topic}:p${partition}`,
  /** The partition count fixed for the topic by its first user. */
  partitions: (topic: string) => `${topic}:partitions`,
  /** Live members of a consumer group: member name → expiry (ms, Redis clock). */
  members: (topic: string, group: string) => `${topic}:g:${group}:members`,
  /** Which member consumes a partition for the group, with a TTL the owner keeps renewing. */
  lease: (topic: string, group: string, partition: number) => `${topic}:g:${group}:lease:p${partition}`,
};
