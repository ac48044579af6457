// One KRaft node's server.properties, from the template and the node's place in the
// quorum. Pure: no files, no processes, so it is unit-tested on its own.

/**
 * @param {string} template the text of infra/kafka/server.properties.template
 * @param {{ nodeId: number, role?: 'combined' | 'broker' | 'controller', kafkaPort?: number, controllerPort?: number,
 *   dataDir: string, voters: { id: number, controllerPort: number }[], brokers?: number, extra?: Record<string, string> }} node
 *   role: 'combined' (broker and controller, the default), or a dedicated 'broker' or
 *   'controller'; brokers: how many brokers the cluster has (with combined nodes, the voters)
 * @returns {string}
 */
export function kafkaNodeProperties(template, { nodeId, role = 'combined', kafkaPort, controllerPort, dataDir, voters, brokers, extra = {} }) {
  if (!['combined', 'broker', 'controller'].includes(role)) throw new Error(`node ${nodeId}: role ${JSON.stringify(role)} is none of combined, broker, controller`);
  if (new Set(voters.map((v) => v.id)).size !== voters.length) throw new Error(`voter ids repeat: ${voters.map((v) => v.id).join(', ')}`);
  const self = voters.find((v) => v.id === nodeId);
  if (role === 'broker') {
    if (self) throw new Error(`node ${nodeId} is a dedicated broker but also one of the quorum's voters (${voters.map((v) => v.id).join(', ')})`);
  } else {
    if (!self) throw new Error(`node ${nodeId} is not one of the quorum's voters (${voters.map((v) => v.id).join(', ')})`);
    if (self.controllerPort !== controllerPort) throw new Error(`node ${nodeId}: controller port ${controllerPort} differs from its voter entry's ${self.controllerPort}`);
  }
  const brokerCount = role === 'combined' ? voters.length : brokers;
  if (!Number.isInteger(brokerCount) || brokerCount < 1) throw new Error(`node ${nodeId}: a cluster with dedicated controllers needs its number of brokers (got ${brokers})`);
  const broker = `PLAINTEXT://127.0.0.1:${kafkaPort}`;
  const controller = `CONTROLLER://127.0.0.1:${controllerPort}`;
  // Three replicas at most, two of them in sync: one broker may die without refusing writes.
  const replicas = Math.min(3, brokerCount);
  const values = {
    NODE_ID: String(nodeId),
    PROCESS_ROLES: { combined: 'broker,controller', broker: 'broker', controller: 'controller' }[role],
    LISTENERS: { combined: `${broker},${controller}`, broker, controller }[role],
    // A controller advertises its own listener (and no broker one, which Kafka refuses on a controller).
    ADVERTISED_LISTENERS: role === 'controller' ? controller : broker,
    VOTERS: voters.map((v) => `${v.id}@127.0.0.1:${v.controllerPort}`).join(','),
    DATA_DIR: dataDir,
    INTERNAL_REPLICAS: String(replicas),
    INTERNAL_MIN_ISR: String(Math.min(2, replicas)),
    ...failureDetection(voters.length, role !== 'combined', brokerCount),
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
 * retries at most 300 ms apart). A follower's fetch is a long poll of
 * replica.fetch.wait.max.ms (Kafka: 500 ms), and a partition it starts to follow joins
 * its next fetch from that leader, not the one waiting: a write with acks=all to a new
 * leader waited up to that long for it (npm run bench -- leader-move); 100 ms here.
 * One node: no election can happen, and fencing the only
 * broker would stop everything on a pause, so its session stays 3 s and the quorum
 * timeouts Kafka's own.
 * @param {number} nodes the quorum's voters
 * @param {boolean} [dedicatedControllers] whether the voters are controllers only, apart from the brokers
 * @param {number} [brokers] how many brokers (with combined nodes, the voters)
 */
export function failureDetection(nodes, dedicatedControllers = false, brokers = nodes) {
  if (dedicatedControllers && brokers > 1) {
    // No node is both: a dead broker never takes the active controller with it, so its
    // partitions move one session after its last heartbeat. The session is the whole
    // floor of a failover here: 500 ms (heartbeats every 125 ms, a quarter of it) moved
    // them 0.6 to 1.1 s after a SIGKILL in the failover benchmark, where the layout with
    // combined nodes took 1.3 to 2.8 s. The quorum's timeouts are the cluster's: a
    // controller's death elects another, and the brokers carry on meanwhile.
    return {
      BROKER_HEARTBEAT_MS: '125',
      BROKER_SESSION_MS: '500',
      QUORUM_FETCH_TIMEOUT_MS: '1000',
      QUORUM_ELECTION_TIMEOUT_MS: '500',
      QUORUM_ELECTION_BACKOFF_MS: '500',
      REPLICA_FETCH_BACKOFF_MS: '100',
      REPLICA_FETCH_WAIT_MS: '100',
    };
  }
  // One broker (alone or beside controllers): nowhere to move its partitions to.
  if (nodes === 1 || brokers === 1) {
    return {
      BROKER_HEARTBEAT_MS: '500',
      BROKER_SESSION_MS: '3000',
      QUORUM_FETCH_TIMEOUT_MS: '2000',
      QUORUM_ELECTION_TIMEOUT_MS: '1000',
      QUORUM_ELECTION_BACKOFF_MS: '1000',
      REPLICA_FETCH_BACKOFF_MS: '1000',
      REPLICA_FETCH_WAIT_MS: '500',
    };
  }
  return {
    BROKER_HEARTBEAT_MS: '250',
    BROKER_SESSION_MS: '1000',
    QUORUM_FETCH_TIMEOUT_MS: '1000',
    QUORUM_ELECTION_TIMEOUT_MS: '500',
    QUORUM_ELECTION_BACKOFF_MS: '500',
    REPLICA_FETCH_BACKOFF_MS: '100',
    REPLICA_FETCH_WAIT_MS: '100',
  };
}
