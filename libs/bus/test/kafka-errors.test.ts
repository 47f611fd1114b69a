import { createRequire } from "node:module";
import {
  KafkaJSAggregateError,
  KafkaJSConnectionError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSRequestTimeoutError,
  KafkaJSSASLAuthenticationError,
  KafkaJSServerDoesNotSupportApiKey,
} from "kafkajs";
import { BusMisconfiguredError, classifyKafkaError } from "../src";
import { misconfiguration } from "../src/kafka/kafka-errors";

// The broker's error codes as kafkajs decodes them from a response (its own table, not a copy).
const { createErrorFromCode } = createRequire(__filename)("kafkajs/src/protocol/error") as {
  createErrorFromCode(code: number): Error & { type: string; retriable: boolean };
};
const fromBroker = (code: number) => createErrorFromCode(code);
const afterRetries = (err: Error) => new KafkaJSNumberOfRetriesExceeded(err, { retryCount: 3, retryTime: 1000 });

describe("classifying Kafka errors", () => {
  it.each([
    [35, "unsupported_version"],
    [29, "topic_authorization_failed"],
    [30, "group_authorization_failed"],
    [31, "cluster_authorization_failed"],
    [58, "authentication_failed"],
    [3, "topic_not_declared"],
  ])("broker error code %i is a misconfiguration (%s), also after kafkajs gave up retrying", (code, reason) => {
    expect(classifyKafkaError(fromBroker(code))).toMatchObject({ kind: "misconfigured", reason });
    expect(classifyKafkaError(afterRetries(fromBroker(code)))).toMatchObject({ kind: "misconfigured", reason });
  });

  it("finds a refused ACL inside an aggregate (createTopics, fetchOffsets)", () => {
    const aggregate = new KafkaJSAggregateError("Topic creation errors", [fromBroker(29) as never]);
    expect(classifyKafkaError(aggregate)).toMatchObject({ kind: "misconfigured", reason: "topic_authorization_failed" });
  });

  it("names client-side refusals: an API the broker lacks, failed SASL", () => {
    expect(classifyKafkaError(new KafkaJSServerDoesNotSupportApiKey("no InitProducerId"))).toMatchObject({ reason: "unsupported_version" });
    // Its typings declare no constructor arguments; kafkajs passes the broker's message.
    const SaslError = KafkaJSSASLAuthenticationError as unknown as new (message: string) => Error;
    expect(classifyKafkaError(new SaslError("bad password"))).toMatchObject({ reason: "authentication_failed" });
  });

  it("keeps retrying an absent or slow broker", () => {
    expect(classifyKafkaError(new KafkaJSConnectionError("connect ECONNREFUSED"))).toEqual({ kind: "unreachable" });
    expect(classifyKafkaError(afterRetries(new KafkaJSRequestTimeoutError("Request Produce(key: 0) timed out")))).toEqual({ kind: "unreachable" });
    // NOT_LEADER_FOR_PARTITION during a leader election: retriable, an outage not a mistake.
    expect(classifyKafkaError(afterRetries(fromBroker(6)))).toEqual({ kind: "unreachable" });
    expect(classifyKafkaError(new Error("socket hang up"))).toEqual({ kind: "unreachable" });
  });

  it("never takes an error from code for an outage, also wrapped by kafkajs's retrier", () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'partition')");
    expect(classifyKafkaError(bug)).toEqual({ kind: "unexpected" });
    expect(classifyKafkaError(afterRetries(bug))).toEqual({ kind: "unexpected" });
  });

  it("sets aside one event the broker refuses for itself (too large), without stopping anything", () => {
    expect(classifyKafkaError(fromBroker(10))).toEqual({ kind: "refused" }); // MESSAGE_TOO_LARGE
  });

  it("builds an error that says where and what to do", () => {
    const err = misconfiguration(afterRetries(fromBroker(3)), { topic: "router.request.completed.v1", group: "activity" });
    expect(err).toBeInstanceOf(BusMisconfiguredError);
    expect(err?.message).toMatch(/topic router\.request\.completed\.v1, group activity/);
    expect(err?.message).toMatch(/router kafka topics create/);
    expect(misconfiguration(new KafkaJSConnectionError("down"), {})).toBeUndefined();
    expect(misconfiguration(fromBroker(30), {})?.message).toMatch(/grant Read on the group/);
  });
});
