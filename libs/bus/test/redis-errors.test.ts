import { ReplyError } from "ioredis";
import { redisFailureOf } from "../src/redis/redis-errors";

describe("classifying Redis errors", () => {
  it.each(["LOADING Redis is loading the dataset in memory", "OOM command not allowed when used memory > 'maxmemory'", "READONLY You can't write against a read only replica.", "MASTERDOWN Link with MASTER is down"])(
    "retries a server that cannot serve now but will: %s",
    (message) => expect(redisFailureOf(new ReplyError(message))).toBe("unreachable"),
  );

  it("retries connection trouble and timeouts", () => {
    expect(redisFailureOf(new Error("Connection is closed."))).toBe("unreachable");
    expect(redisFailureOf(new Error("Command timed out"))).toBe("unreachable");
  });

  it("takes a refused command for a refusal, not an outage", () => {
    expect(redisFailureOf(new ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value"))).toBe("refused");
    expect(redisFailureOf(new ReplyError("NOPERM this user has no permissions to run the 'xadd' command"))).toBe("refused");
  });

  it("never retries an error from code", () => {
    expect(redisFailureOf(new TypeError("Cannot read properties of undefined (reading 'length')"))).toBe("broken");
    expect(redisFailureOf(new Error("publish failed", { cause: new RangeError("Invalid array length") }))).toBe("broken");
  });
});
