// One KRaft node's server.properties, from the template and the node's place in the
// quorum. Pure: no files, no processes, so it is unit-tested on its own.

/**
 * @param {string} template the text of infra/kafka/server.properties.template
 * @param {{ nodeId: number, kafkaPort: number, controllerPort: number, dataDir: string,
 *   voters: { id: number, controllerPort: number }[], extra?: Record<string, string> }} node
 * @returns {string}
 */
export function kafkaNodeProperties(template, { nodeId, kafkaPort, controllerPort, dataDir, voters, extra = {} }) {
  const self = voters.find((v) => v.id === nodeId);
  if (!self) throw new Error(`node ${nodeId} is not one of the quorum's voters (${voters.map((v) => v.id).join(', ')})`);
  if (self.controllerPort !== controllerPort) throw new Error(`node ${nodeId}: controller port ${controllerPort} differs from its voter entry's ${self.controllerPort}`);
  if (new Set(voters.map((v) => v.id)).size !== voters.length) throw new Error(`voter ids repeat: ${voters.map((v) => v.id).join(', ')}`);
  // Three replicas at most, two of them in sync: one broker may die without refusing writes.
  const replicas = Math.min(3, voters.length);
  const values = {
    NODE_ID: String(nodeId),
    VOTERS: voters.map((v) => `${v.id}@127.0.0.1:${v.controllerPort}`).join(','),
    KAFKA_PORT: String(kafkaPort),
    CONTROLLER_PORT: String(controllerPort),
    DATA_DIR: dataDir,
    INTERNAL_REPLICAS: String(replicas),
    INTERNAL_MIN_ISR: String(Math.min(2, replicas)),
    ...failureDetection(voters.length),
  };
  const text = template.replace(/\$\{([A-Z_]+)\}/g, (whole, name) => {
    if (!(name in values)) throw new Error(`server.properties.template: unknown placeholder ${whole}`);
    return values[name];
  });
  const added = Object.entries(extra).map(([k, v]) => `${k}=${v}\n`);
  return added.length === 0 ? text : `${text.endsWith('\n') ? text : `${text}\n`}# Given by the caller.\n${added.join('')}`;
}

/**
 * The failure-detection timeouts of a quorum of `nodes` KRaft nodes, as template values
 * (docs/operations/deployment.md, "Failure detection"). Every node of a cluster is both
 * broker and controller, so a SIGKILLed node may be the active controller: the others
 * notice after the quorum fetch timeout, elect a new one, and only then is the dead
 * broker fenced, a session timeout later. With Kafka's quorum timeouts (2 s, 1 s) and a
 * 3 s session, the failover benchmark's partitions were led again 3.2 to 7.3 s after a
 * kill; with these, 1.3 to 2.8 s. Half of these (500 ms) was faster still, but in a run
 * whose logs were kept the quorum's leader resigned and was elected again about every
 * 1.2 s while a node was down, and once with none down: a 500 ms quorum fetch timeout is
 * KRaft's own fetch wait, and a leader resigns after 1.5 of them without a majority. A
 * follower of a dead leader backs off replica.fetch.backoff.ms (Kafka: 1 s) before it fetches
 * again, from the new leader too, and writes with acks=all wait for it: 100 ms here (a
 * write reached the new leader 0.2 s after its election instead of 0.5 s, with the clients'
 * retries at most 300 ms apart). One node: no election can happen, and fencing the only
 * broker would stop everything on a pause, so its session stays 3 s and the quorum
 * timeouts Kafka's own.
 * @param {number} nodes
 */
export function failureDetection(nodes) {
  if (nodes === 1) {
    return {
      BROKER_HEARTBEAT_MS: '500',
      BROKER_SESSION_MS: '3000',
      QUORUM_FETCH_TIMEOUT_MS: '2000',
      QUORUM_ELECTION_TIMEOUT_MS: '1000',
      QUORUM_ELECTION_BACKOFF_MS: '1000',
      REPLICA_FETCH_BACKOFF_MS: '1000',
    };
  }
  return {
    BROKER_HEARTBEAT_MS: '250',
    BROKER_SESSION_MS: '1000',
    QUORUM_FETCH_TIMEOUT_MS: '1000',
    QUORUM_ELECTION_TIMEOUT_MS: '500',
    QUORUM_ELECTION_BACKOFF_MS: '500',
    REPLICA_FETCH_BACKOFF_MS: '100',
  };
}
