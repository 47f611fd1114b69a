import { loadConfig, z } from "@router/config";
import { checkTopicLayout, kafkaTopicEnvironment, planTopics, topicLayoutOf, topicNames } from "../src";

const layout = { partitions: 12, replicationFactor: 3, minInsyncReplicas: 2 };

describe("planning the Kafka topics a deployment declares", () => {
  it("declares each topic and its dead-letter topic, under the install's namespace", () => {
    expect(topicNames(["a.v1", "b.v1", "a.v1"])).toEqual(["a.v1", "a.v1.dlq", "b.v1", "b.v1.dlq"]);
    expect(topicNames(["a.v1"], "eu")).toEqual(["eu.a.v1", "eu.a.v1.dlq"]);
  });

  it("creates what is missing with the layout, and leaves existing topics alone", () => {
    const plan = planTopics(topicNames(["a.v1", "b.v1"]), layout, new Map([["a.v1", 12], ["a.v1.dlq", 24], ["b.v1", 3]]));
    expect(plan.create).toEqual([
      { topic: "b.v1.dlq", numPartitions: 12, replicationFactor: 3, configEntries: [{ name: "min.insync.replicas", value: "2" }] },
    ]);
    expect(plan.present).toEqual([{ topic: "a.v1", partitions: 12 }, { topic: "a.v1.dlq", partitions: 24 }]);
    // Never grown by the tool: more partitions would move keys while old events drain.
    expect(plan.fewerPartitions).toEqual([{ topic: "b.v1", partitions: 3, wanted: 12 }]);
  });

  it("reads the layout from the environment, with min.insync.replicas following a small replication factor", () => {
    const schema = z.object(kafkaTopicEnvironment);
    expect(topicLayoutOf(loadConfig(schema, {}))).toEqual({ partitions: 12, replicationFactor: 3, minInsyncReplicas: 2 });
    expect(topicLayoutOf(loadConfig(schema, { KAFKA_TOPIC_PARTITIONS: "4", KAFKA_TOPIC_REPLICATION_FACTOR: "1" }))).toEqual({
      partitions: 4,
      replicationFactor: 1,
      minInsyncReplicas: 1,
    });
    expect(() => loadConfig(schema, { KAFKA_TOPIC_PARTITIONS: "0" })).toThrow(/KAFKA_TOPIC_PARTITIONS/);
  });

  it("refuses a layout no broker would accept, naming the setting", () => {
    expect(() => checkTopicLayout({ ...layout, minInsyncReplicas: 4 })).toThrow(/KAFKA_TOPIC_MIN_INSYNC_REPLICAS/);
    expect(() => planTopics(["a"], { ...layout, partitions: 1.5 }, new Map())).toThrow(/KAFKA_TOPIC_PARTITIONS/);
  });
});
