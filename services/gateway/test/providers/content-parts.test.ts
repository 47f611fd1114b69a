import { parseResponsesRequest } from "../../../../libs/inference-api/src/responses/request";
import { adapterFor } from "@router/providers";
import { UnsupportedRequest } from "@router/providers";
import { bodyOf, chat, target } from "./wire-samples";

/**
 * File and audio content parts of the chat format, per provider family: as written where the
 * provider reads them, translated where its own format has the same thing, and a request the
 * provider cannot read at all is not built (the cascade moves on; none left is a 400 naming the part).
 */

const PDF = Buffer.from("%PDF-1.4 fake").toString("base64");
const WAV = Buffer.from("RIFF fake wav").toString("base64");
const pdfPart = { type: "file", file: { filename: "report.pdf", file_data: `data:application/pdf;base64,${PDF}` } };
const audioPart = { type: "input_audio", input_audio: { data: WAV, format: "wav" } };
const ask = (...parts: unknown[]) => chat({ messages: [{ role: "user", content: [{ type: "text", text: "Summarise" }, ...parts] }] });

const build = (family: "openai" | "anthropic" | "google", slug: string, req = ask(pdfPart, audioPart)) =>
  bodyOf(adapterFor(family, slug)!.buildRequest(req, target({ providerSlug: slug }), false));

const refusal = (fn: () => unknown): UnsupportedRequest => {
  try {
    fn();
  } catch (err) {
    if (err instanceof UnsupportedRequest) return err;
    throw err;
  }
  throw new Error("the request was built");
};

describe("file and audio content parts", () => {
  it("go to OpenAI as the client wrote them", () => {
    expect(build("openai", "openai").messages[0].content).toEqual([{ type: "text", text: "Summarise" }, pdfPart, audioPart]);
  });

  it("reach Anthropic as a document block (a PDF, or plain text) and are refused for audio", () => {
    expect(build("anthropic", "anthropic", ask(pdfPart)).messages[0].content[1]).toEqual({
      type: "document",
      source: { type: "base64", media_type: "application/pdf", data: PDF },
      title: "report.pdf",
    });
    const text = { type: "file", file: { file_data: `data:text/plain;base64,${Buffer.from("notes").toString("base64")}` } };
    expect(build("anthropic", "anthropic", ask(text)).messages[0].content[1]).toEqual({ type: "document", source: { type: "text", media_type: "text/plain", data: "notes" } });
    expect(refusal(() => build("anthropic", "anthropic")).field).toBe("messages.0.content.2");
    expect(refusal(() => build("anthropic", "anthropic", ask({ type: "file", file: { file_id: "file-abc" } }))).message).toContain("file_id");
  });

  it("reach Gemini as inline data of their media type", () => {
    expect(build("google", "google").contents[0].parts).toEqual([
      { text: "Summarise" },
      { inlineData: { mimeType: "application/pdf", data: PDF } },
      { inlineData: { mimeType: "audio/wav", data: WAV } },
    ]);
  });

  it("are not built for an OpenAI-compatible provider that cannot read them, naming the part", () => {
    expect(refusal(() => build("openai", "groq", ask(pdfPart))).field).toBe("messages.0.content.1");
    expect(refusal(() => build("openai", "deepseek", ask(audioPart))).message).toBe("messages.0.content.1: deepseek cannot read audio");
    expect(build("openai", "vllm", ask(audioPart)).messages[0].content[1]).toEqual(audioPart);
  });

  it("are checked by shape: a file needs file_data (a data URL) or file_id, audio a known format", () => {
    expect(() => ask({ type: "file", file: { filename: "x.pdf" } })).toThrow(/messages\.0\.content\.1\.file/);
    expect(() => ask({ type: "file", file: { file_data: "https://example.com/x.pdf" } })).toThrow(/file_data/);
    expect(() => ask({ type: "input_audio", input_audio: { data: WAV, format: "ogg" } })).toThrow(/input_audio\.format/);
  });
});

describe("fields Router does not model, on OpenAI's own chat completions body", () => {
  const body = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], service_tier: "flex", transforms: ["middle-out"] };
  const sent = (slug: string) => bodyOf(adapterFor("openai", slug)!.buildNativeRequest!(body, chat(body), target({ providerSlug: slug }), false));

  it("go to OpenAI when its API takes them, and not when it would refuse them", () => {
    expect(sent("openai")).toMatchObject({ service_tier: "flex" });
    expect(sent("openai")).not.toHaveProperty("transforms");
  });

  it("all go to a server that ignores what it does not know", () => {
    expect(sent("together")).toMatchObject({ service_tier: "flex", transforms: ["middle-out"] });
  });
});

describe("file and audio input parts of a Responses body", () => {
  it("become the chat route's file and input_audio parts", () => {
    const { request } = parseResponsesRequest({
      model: "openai/gpt-4o-mini",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Summarise" },
            { type: "input_file", filename: "report.pdf", file_data: pdfPart.file.file_data },
            { type: "input_audio", input_audio: { data: WAV, format: "mp3" } },
          ],
        },
      ],
    });
    expect(request.messages[0]?.content).toEqual([
      { type: "text", text: "Summarise" },
      pdfPart,
      { type: "input_audio", input_audio: { data: WAV, format: "mp3" } },
    ]);
  });

  it("are checked by shape, naming the nested field", () => {
    expect(() => parseResponsesRequest({ model: "m", input: [{ role: "user", content: [{ type: "input_file", filename: "x.pdf" }] }] })).toThrow(/^input\.0\.content\.0: expected file_data or file_id/);
  });
});
