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
  };
  const text = template.replace(/\$\{([A-Z_]+)\}/g, (whole, name) => {
    if (!(name in values)) throw new Error(`server.properties.template: unknown placeholder ${whole}`);
    return values[name];
  });
  const added = Object.entries(extra).map(([k, v]) => `${k}=${v}\n`);
  return added.length === 0 ? text : `${text.endsWith('\n') ? text : `${text}\n`}# Given by the caller.\n${added.join('')}`;
}
