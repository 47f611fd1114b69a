import { fitToEndpoint, type EndpointParameters } from "@router/providers";
import { UnsupportedRequest } from "@router/providers";
import { chat } from "./wire-samples";

// Lists as the bundled catalog has them for a few endpoints that refuse what others take.
const O3 = ["include_reasoning", "max_tokens", "reasoning", "response_format", "seed", "structured_outputs", "tool_choice", "tools"];
const GEMINI_2_0_FLASH = [
  "frequency_penalty", "max_tokens", "presence_penalty", "response_format", "seed", "stop", "structured_outputs",
  "temperature", "tool_choice", "tools", "top_k", "top_p",
];
const DEEPSEEK_CHAT = [
  "frequency_penalty", "logprobs", "max_tokens", "presence_penalty", "response_format", "stop", "temperature",
  "tool_choice", "tools", "top_logprobs", "top_p",
];
const EVERYTHING = [
  "max_tokens", "temperature", "top_p", "top_k", "seed", "stop", "frequency_penalty", "presence_penalty", "reasoning",
  "include_reasoning", "tools", "tool_choice", "response_format", "structured_outputs",
];

const endpoint = (supportedParameters: string[], overrides: Partial<EndpointParameters> = {}): EndpointParameters => ({
  modelId: "acme/model",
  providerSlug: "acme",
  apiFamily: "openai",
  supportedParameters,
  ...overrides,
});
const without = (list: string[], ...names: string[]) => list.filter((p) => !names.includes(p));
const TOOLS = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }];
const SCHEMA_FORMAT = { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" } } };

const HINTS: Array<[string, Record<string, unknown>]> = [
  ["temperature", { temperature: 0.5 }],
  ["top_p", { top_p: 0.9 }],
  ["top_k", { top_k: 40 }],
  ["seed", { seed: 42 }],
  ["stop", { stop: ["END"] }],
  ["frequency_penalty", { frequency_penalty: 0.1 }],
  ["presence_penalty", { presence_penalty: 0.2 }],
];

function refusal(run: () => unknown): UnsupportedRequest {
  try {
    run();
  } catch (err) {
    if (err instanceof UnsupportedRequest) return err;
    throw err;
  }
  throw new Error("expected an UnsupportedRequest");
}

describe("fitToEndpoint", () => {
  describe("when nothing has to go", () => {
    it("returns the caller's own request when the catalog lists nothing for the endpoint", () => {
      const req = chat({ temperature: 0.5, seed: 1, tools: TOOLS, tool_choice: "required", response_format: SCHEMA_FORMAT, reasoning: { effort: "low" } });

      const fitted = fitToEndpoint(req, endpoint([]));

      expect(fitted.request).toBe(req);
      expect(fitted.dropped).toEqual([]);
    });

    it("returns the caller's own request when the endpoint lists every field it carries", () => {
      const req = chat({ temperature: 0.5, top_p: 0.9, seed: 1, stop: "END", tools: TOOLS, tool_choice: "auto", response_format: SCHEMA_FORMAT });

      const fitted = fitToEndpoint(req, endpoint(EVERYTHING));

      expect(fitted.request).toBe(req);
      expect(fitted.dropped).toEqual([]);
    });

    it("treats a null stop as no stop at all", () => {
      const req = chat({ stop: null });

      const fitted = fitToEndpoint(req, endpoint(O3));

      expect(fitted.request).toBe(req);
      expect(fitted.dropped).toEqual([]);
    });
  });

  describe("sampling hints", () => {
    it.each(HINTS)("drops %s where the endpoint does not list it and keeps the others", (field, fields) => {
      const req = chat({ ...fields, max_tokens: 100 });

      const fitted = fitToEndpoint(req, endpoint(without(EVERYTHING, field)));

      expect(fitted.dropped).toEqual([field]);
      expect(fitted.request).not.toHaveProperty(field);
      expect(fitted.request.max_tokens).toBe(100);
    });

    it.each(HINTS)("keeps %s where the endpoint lists it", (field, fields) => {
      const req = chat(fields);

      const fitted = fitToEndpoint(req, endpoint([field, "max_tokens"]));

      expect(fitted.request).toBe(req);
    });

    it("copies the request once and leaves the caller's object as it was", () => {
      const req = chat({ temperature: 0.5, top_p: 0.9, seed: 42 });

      const fitted = fitToEndpoint(req, endpoint(O3));

      expect(fitted.request).not.toBe(req);
      expect(fitted.dropped).toEqual(["temperature", "top_p"]);
      const { temperature: _t, top_p: _p, ...rest } = req;
      expect(fitted.request).toEqual(rest);
      expect(req).toMatchObject({ temperature: 0.5, top_p: 0.9, seed: 42 });
    });

    it("drops temperature and top_p for o3 and keeps its seed", () => {
      const fitted = fitToEndpoint(chat({ temperature: 1, top_p: 1, seed: 3 }), endpoint(O3, { modelId: "openai/o3", providerSlug: "openai" }));

      expect(fitted.dropped).toEqual(["temperature", "top_p"]);
      expect(fitted.request.seed).toBe(3);
    });
  });

  describe("reasoning", () => {
    it("drops reasoning for an endpoint that lists neither reasoning nor include_reasoning", () => {
      const fitted = fitToEndpoint(chat({ reasoning: { effort: "high" } }), endpoint(GEMINI_2_0_FLASH));

      expect(fitted.dropped).toEqual(["reasoning"]);
      expect(fitted.request.reasoning).toBeUndefined();
    });

    it.each(["reasoning", "include_reasoning"])("keeps reasoning for an endpoint that lists %s", (name) => {
      const req = chat({ reasoning: { max_tokens: 2000 } });

      expect(fitToEndpoint(req, endpoint(["max_tokens", name])).request).toBe(req);
    });
  });

  describe("fields that are never dropped", () => {
    it("keeps messages, both completion budgets, stream and the router's own fields whatever the list says", () => {
      const neverDropped = {
        max_tokens: 100,
        max_completion_tokens: 120,
        stream: true,
        stream_options: { include_usage: true },
        user: "u-1",
        session_id: "s-1",
        provider: { sort: "price" as const },
      };
      const req = chat({ ...neverDropped, temperature: 0.2 });

      const fitted = fitToEndpoint(req, endpoint(["tools"]));

      expect(fitted.dropped).toEqual(["temperature"]);
      expect(fitted.request).toMatchObject({ messages: req.messages, ...neverDropped });
    });
  });

  describe("tools", () => {
    it("refuses tools for an endpoint that does not take them, naming the model and provider", () => {
      const err = refusal(() => fitToEndpoint(chat({ tools: TOOLS }), endpoint(without(EVERYTHING, "tools"), { modelId: "acme/chatty", providerSlug: "acme-cloud" })));

      expect(err.field).toBe("tools");
      expect(err.message).toBe("tools: acme/chatty on acme-cloud does not take tools");
    });

    it("lets an empty tools list through, since it asks for nothing", () => {
      const req = chat({ tools: [] });

      expect(fitToEndpoint(req, endpoint(["max_tokens"])).request).toBe(req);
    });

    it("keeps parallel_tool_calls with the tools", () => {
      const req = chat({ tools: TOOLS, parallel_tool_calls: false });

      const fitted = fitToEndpoint(req, endpoint(["tools", "tool_choice"]));

      expect(fitted.request).toBe(req);
    });

    it("drops an auto tool_choice for an endpoint that takes tools but not tool_choice", () => {
      const fitted = fitToEndpoint(chat({ tools: TOOLS, tool_choice: "auto" }), endpoint(["tools"]));

      expect(fitted.dropped).toEqual(["tool_choice"]);
      expect(fitted.request.tool_choice).toBeUndefined();
      expect(fitted.request.tools).toEqual(TOOLS);
    });

    it.each([["required"], ["none"], [{ type: "function", function: { name: "lookup" } }]])(
      "refuses tool_choice %j for an endpoint that takes tools but not tool_choice",
      (toolChoice) => {
        const err = refusal(() => fitToEndpoint(chat({ tools: TOOLS, tool_choice: toolChoice }), endpoint(["tools"])));

        expect(err.field).toBe("tool_choice");
      },
    );
  });

  describe("response_format", () => {
    it("keeps a json_schema format for an endpoint that lists structured_outputs", () => {
      const req = chat({ response_format: SCHEMA_FORMAT });

      expect(fitToEndpoint(req, endpoint(GEMINI_2_0_FLASH)).request).toBe(req);
    });

    it("sends a json_schema format as json_object where the endpoint lists only response_format", () => {
      const req = chat({ response_format: SCHEMA_FORMAT });

      const fitted = fitToEndpoint(req, endpoint(DEEPSEEK_CHAT, { modelId: "deepseek/deepseek-chat", providerSlug: "deepseek" }));

      expect(fitted.request.response_format).toEqual({ type: "json_object" });
      expect(fitted.dropped).toEqual(["response_format.json_schema"]);
      expect(req.response_format).toEqual(SCHEMA_FORMAT);
    });

    it("drops a json_schema format where the endpoint lists neither structured_outputs nor response_format", () => {
      const fitted = fitToEndpoint(chat({ response_format: SCHEMA_FORMAT }), endpoint(["max_tokens", "temperature"]));

      expect(fitted.dropped).toEqual(["response_format"]);
      expect(fitted.request).not.toHaveProperty("response_format");
    });

    it("keeps a json_object format where response_format is listed and drops it where it is not", () => {
      const req = chat({ response_format: { type: "json_object" } });

      expect(fitToEndpoint(req, endpoint(["response_format"])).request).toBe(req);
      const dropped = fitToEndpoint(req, endpoint(["structured_outputs", "max_tokens"]));
      expect(dropped.dropped).toEqual(["response_format"]);
      expect(dropped.request.response_format).toBeUndefined();
    });

    it("drops a text format where response_format is not listed", () => {
      const fitted = fitToEndpoint(chat({ response_format: { type: "text" } }), endpoint(["max_tokens"]));

      expect(fitted.dropped).toEqual(["response_format"]);
    });

    it("keeps any format for the Anthropic family, whose adapter writes it into the system prompt", () => {
      const req = chat({ response_format: SCHEMA_FORMAT });
      const claude = ["include_reasoning", "max_tokens", "reasoning", "stop", "temperature", "tool_choice", "tools", "top_k", "top_p"];

      expect(fitToEndpoint(req, endpoint(claude, { apiFamily: "anthropic" })).request).toBe(req);
      expect(fitToEndpoint(req, endpoint(claude, { apiFamily: "openai" })).dropped).toEqual(["response_format"]);
    });
  });

  describe("under provider.require_parameters", () => {
    const strict = (body: Record<string, unknown>) => chat({ ...body, provider: { require_parameters: true } });

    it("refuses an endpoint that does not list a hint instead of dropping it", () => {
      const err = refusal(() => fitToEndpoint(strict({ temperature: 0.3 }), endpoint(O3, { modelId: "openai/o3", providerSlug: "openai" })));

      expect(err.field).toBe("temperature");
      expect(err.message).toBe("temperature: openai/o3 on openai does not take temperature");
    });

    it("refuses rather than send a json_schema format as json_object", () => {
      const err = refusal(() => fitToEndpoint(strict({ response_format: SCHEMA_FORMAT }), endpoint(DEEPSEEK_CHAT)));

      expect(err.field).toBe("response_format");
    });

    it("refuses rather than drop an auto tool_choice", () => {
      const err = refusal(() => fitToEndpoint(strict({ tools: TOOLS, tool_choice: "auto" }), endpoint(["tools"])));

      expect(err.field).toBe("tool_choice");
    });

    it("still drops a text format, which asks for nothing", () => {
      const fitted = fitToEndpoint(strict({ response_format: { type: "text" } }), endpoint(["max_tokens"]));

      expect(fitted.dropped).toEqual(["response_format"]);
    });

    it("passes a request the endpoint fully supports untouched", () => {
      const req = strict({ temperature: 0.3, response_format: SCHEMA_FORMAT });

      expect(fitToEndpoint(req, endpoint(GEMINI_2_0_FLASH)).request).toBe(req);
    });
  });
});
