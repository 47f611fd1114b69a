import { countToolCalls, StreamedToolCalls } from "../../src/chat/tool-call-check";
import type { CompletionChoice } from "@router/providers";

const choice = (...args: string[]): CompletionChoice => ({
  index: 0,
  message: {
    role: "assistant",
    content: null,
    tool_calls: args.map((a, i) => ({ id: `call_${i}`, type: "function" as const, function: { name: "f", arguments: a } })),
  },
  finish_reason: "tool_calls",
  native_finish_reason: "tool_calls",
});

describe("tool calls in a served answer", () => {
  it.each([
    [[choice('{"city":"Paris"}')], { total: 1, invalid: 0 }],
    [[choice('{"a":1}', "{not json", "[1,2]", '"text"', "null")], { total: 5, invalid: 4 }],
    [[choice()], { total: 0, invalid: 0 }],
    [[], { total: 0, invalid: 0 }],
  ])("counts %j", (choices, expected) => {
    expect(countToolCalls(choices)).toEqual(expected);
  });

  it("joins a stream's argument pieces per choice and tool index before judging them", () => {
    const streamed = new StreamedToolCalls();
    expect(streamed.count()).toEqual({ total: 0, invalid: 0 });
    streamed.add(0, [{ index: 0, id: "call_a", function: { name: "f", arguments: '{"ci' } }]);
    streamed.add(0, [{ index: 1, id: "call_b", function: { name: "g", arguments: "{broken" } }]);
    streamed.add(0, [{ index: 0, function: { arguments: 'ty":"Paris"}' } }]);
    streamed.add(1, [{ index: 0, function: { arguments: "{}" } }]);
    expect(streamed.count()).toEqual({ total: 3, invalid: 1 });
  });
});
