import { stackBusEnv, stackBusOf } from "../src/stack-bus";

describe("the bus a test stack runs on", () => {
  it("is Redis Streams unless the environment asks for Kafka", () => {
    const bus = stackBusOf("e2e-1", {});
    expect(bus).toMatchObject({ kind: "redis", namespace: "e2e-1" });
    expect(stackBusEnv(bus)).toMatchObject({ ROUTER_BUS: "redis", ROUTER_BUS_NAMESPACE: "e2e-1" });
    expect(stackBusEnv(bus).KAFKA_BROKERS).toBeUndefined();
  });

  it("runs every service on Kafka with ROUTER_BUS=kafka and KAFKA_BROKERS (make test-kafka)", () => {
    const bus = stackBusOf("e2e-2", { ROUTER_BUS: "kafka", KAFKA_BROKERS: "k1:9092, k2:9092" });
    expect(bus).toMatchObject({ kind: "kafka", kafkaBrokers: ["k1:9092", "k2:9092"] });
    expect(stackBusEnv(bus)).toMatchObject({ ROUTER_BUS: "kafka", KAFKA_BROKERS: "k1:9092,k2:9092", ROUTER_BUS_NAMESPACE: "e2e-2" });
  });

  it("refuses Kafka without a broker, and a bus separate processes cannot share", () => {
    expect(() => stackBusOf("e2e-3", { ROUTER_BUS: "kafka" })).toThrow(/KAFKA_BROKERS/);
    expect(() => stackBusOf("e2e-3", { ROUTER_BUS: "memory" })).toThrow(/redis.*or kafka/);
  });
});
