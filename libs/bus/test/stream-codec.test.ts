import { envelopeOf } from "../src/envelope";
import { envelopeOfFields, fieldsOf } from "../src/redis/stream-codec";

/** What XADD stores and XREADGROUP hands back: every field and value as bytes of its own, not the buffers written. */
const asReply = (fields: Array<string | Buffer>): Buffer[] => fields.map((f) => (typeof f === "string" ? Buffer.from(f) : Buffer.copyBytesFrom(f)));

const event = envelopeOf({
  topic: "router.request.completed.v1",
  key: "org_1",
  type: "router.request.completed.v1",
  id: "gen-1",
  payload: Buffer.from([0, 1, 2, 255, 10, 13]),
  headers: { traceparent: "00-abc-def-01", "dlq-reason": 'Error: line one\nline "two" é' },
});

describe("redis stream entries", () => {
  it.each(["fields", "packed"] as const)("read back as they were written in the %s layout", (layout) => {
    const read = envelopeOfFields(event.topic, asReply(fieldsOf(event, layout)));
    expect(read).toEqual({ ...event, payload: expect.anything() });
    expect(Buffer.from(read.payload)).toEqual(Buffer.from(event.payload));
  });

  it("pack an event into one field, its head readable and its payload at the end", () => {
    const fields = fieldsOf(event, "packed");
    expect(fields).toHaveLength(2);
    expect(fields[0]).toBe("e");
    const entry = fields[1] as Buffer;
    const headLength = entry.readUInt32BE(0);
    expect(JSON.parse(entry.toString("utf8", 4, 4 + headLength))).toEqual({
      id: "gen-1",
      type: "router.request.completed.v1",
      key: "org_1",
      headers: { "content-type": "application/x-protobuf", traceparent: "00-abc-def-01", "dlq-reason": 'Error: line one\nline "two" é' },
    });
    expect(entry.subarray(4 + headLength)).toEqual(Buffer.from(event.payload));
  });

  it("give a packed event's payload its own bytes, not the reply's", () => {
    const reply = asReply(fieldsOf(event, "packed"));
    const read = envelopeOfFields(event.topic, reply);
    reply[1]!.fill(0);
    expect(Buffer.from(read.payload)).toEqual(Buffer.from(event.payload));
  });

  it.each([
    ["shorter than its length field", Buffer.from([0, 0])],
    ["with a head longer than the entry", Buffer.concat([Buffer.from([0, 0, 1, 0]), Buffer.from("{}")])],
    ["whose head is not JSON", Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from("{x}")])],
    ["whose head has no id", Buffer.concat([Buffer.from([0, 0, 0, 28]), Buffer.from('{"type":"t","key":"k","x":1}')])],
  ])("read a packed entry %s as an event without an id", (_, entry) => {
    const read = envelopeOfFields("t", [Buffer.from("e"), entry]);
    expect(read).toMatchObject({ id: "", type: "", key: "", headers: {} });
    expect(read.payload).toHaveLength(0);
  });
});
