import { ManualClock } from "@router/money";
import { MAX_LOGO_BYTES } from "../src/app";
import { dataUri, jpegBytes, pngBytes, SVG_BYTES } from "./images";
import { startReportsHarness, type ReportsHarness } from "./reports-harness";

let h: ReportsHarness;

beforeAll(async () => {
  h = await startReportsHarness("reportsbrand", new ManualClock());
});

afterAll(async () => {
  await h.close();
});

/** A PNG whose decoded size is exactly `bytes` (its padding chunk takes up the difference). */
const pngOfSize = (bytes: number): Buffer => pngBytes(2, 2, bytes - pngBytes(2, 2, 1).length + 1);

describe("GET /v1/reports/branding", () => {
  it("answers the organisation's own name and nulls before anything is set, for any role", async () => {
    for (const role of ["owner", "admin", "member", "billing", "readonly"] as const) {
      const res = await h.call("GET", "/v1/reports/branding", { orgId: "org_fresh", orgName: "Fresh Org", role });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ org_name: "Fresh Org", brand_name: null, brand_logo: null, brand_footer: null });
    }
  });

  it("refuses an inference key, and a caller without the gateway's signed identity", async () => {
    const inference = await h.call("GET", "/v1/reports/branding", { credential: "inference" });
    expect(inference.status).toBe(403);
    expect(inference.body.error.code).toBe("permission_denied");
    const unsigned = await fetch(`${h.base}/v1/reports/branding`);
    expect(unsigned.status).toBe(401);
  });
});

describe("PUT /v1/reports/branding", () => {
  it("saves name, footer and a PNG logo, and reads them back", async () => {
    const logo = dataUri("image/png", pngBytes(16, 16));
    const body = { brand_name: "Studio Nord", brand_footer: "Studio Nord GmbH\nBerlin", brand_logo: logo };

    const put = await h.call("PUT", "/v1/reports/branding", { orgId: "org_put", orgName: "Nord Holding" }, body);
    const get = await h.call("GET", "/v1/reports/branding", { orgId: "org_put", orgName: "Nord Holding", role: "readonly" });

    expect(put.status).toBe(200);
    expect(put.body.data).toEqual({ org_name: "Nord Holding", ...body });
    expect(get.body.data).toEqual(put.body.data);
  });

  it("accepts a JPEG logo and stores it in canonical form", async () => {
    const bytes = jpegBytes(40, 20);
    const res = await h.call("PUT", "/v1/reports/branding", { orgId: "org_jpeg" }, { brand_logo: `DATA:IMAGE/JPEG;base64,${bytes.toString("base64")}` });
    expect(res.status).toBe(200);
    expect(res.body.data.brand_logo).toBe(dataUri("image/jpeg", bytes));
  });

  it("clears every field that is absent, null or blank", async () => {
    const as = { orgId: "org_clear", orgName: "Clear Org" };
    await h.call("PUT", "/v1/reports/branding", as, { brand_name: "A", brand_footer: "B", brand_logo: dataUri("image/png", pngBytes()) });

    const res = await h.call("PUT", "/v1/reports/branding", as, { brand_name: "  ", brand_footer: null });

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ org_name: "Clear Org", brand_name: null, brand_logo: null, brand_footer: null });
    expect((await h.call("GET", "/v1/reports/branding", as)).body.data).toEqual(res.body.data);
  });

  it("takes names and footers at their limits, counting characters rather than bytes", async () => {
    const name = "é".repeat(79) + "🙂";
    const footer = "x".repeat(200);
    const res = await h.call("PUT", "/v1/reports/branding", { orgId: "org_limits" }, { brand_name: name, brand_footer: footer });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ brand_name: name, brand_footer: footer });
  });

  it("takes a logo just under 150 KB", async () => {
    const bytes = pngOfSize(MAX_LOGO_BYTES - 1);
    expect(bytes.length).toBe(MAX_LOGO_BYTES - 1);
    const res = await h.call("PUT", "/v1/reports/branding", { orgId: "org_biglogo" }, { brand_logo: dataUri("image/png", bytes) });
    expect(res.status).toBe(200);
  });

  const bad: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ["a name of 81 characters", { brand_name: "n".repeat(81) }, "brand_name", /at most 80/],
    ["a name with a line break", { brand_name: "Two\nLines" }, "brand_name", /control/],
    ["a name that is not a string", { brand_name: 42 }, "brand_name", /string/],
    ["a footer of 201 characters", { brand_footer: "f".repeat(201) }, "brand_footer", /at most 200/],
    ["a footer with a control character", { brand_footer: "bell\u0007" }, "brand_footer", /control/],
    ["a logo given as a URL", { brand_logo: "https://cdn.example.com/logo.png" }, "brand_logo", /data: URI/],
    ["an SVG logo", { brand_logo: dataUri("image/svg+xml", SVG_BYTES) }, "brand_logo", /SVG/],
    ["an SVG disguised as a PNG", { brand_logo: dataUri("image/png", SVG_BYTES) }, "brand_logo", /bytes are an SVG/],
    ["text labelled JPEG", { brand_logo: dataUri("image/jpeg", Buffer.from("not an image at all")) }, "brand_logo", /not a readable image/],
    ["a JPEG labelled PNG", { brand_logo: dataUri("image/png", jpegBytes()) }, "brand_logo", /bytes are a jpg image/],
    ["a GIF", { brand_logo: dataUri("image/gif", Buffer.from("GIF89a")) }, "brand_logo", /PNG or JPEG/],
    ["a PNG that is not base64", { brand_logo: "data:image/png,%89PNG" }, "brand_logo", /base64/],
    ["broken base64", { brand_logo: "data:image/png;base64,abcde" }, "brand_logo", /base64/],
    ["an empty logo", { brand_logo: "data:image/png;base64," }, "brand_logo", /no image data/],
    ["a logo of 150 KB", { brand_logo: dataUri("image/png", pngOfSize(MAX_LOGO_BYTES)) }, "brand_logo", /under 150 KB/],
    ["an oversized logo", { brand_logo: dataUri("image/png", pngOfSize(400_000)) }, "brand_logo", /under 150 KB/],
    ["an unknown field", { brand_colour: "#fff" }, "brand_colour", /.+/],
  ];

  it.each(bad)("refuses %s with a 400 naming the field, and keeps what was saved", async (_what, body, field, message) => {
    const as = { orgId: "org_bad", orgName: "Bad Org" };
    await h.call("PUT", "/v1/reports/branding", as, { brand_name: "Kept" });

    const res = await h.call("PUT", "/v1/reports/branding", as, body);

    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ status: 400, code: "invalid_request", details: { field } });
    expect(res.body.error.message).toMatch(message);
    expect((await h.call("GET", "/v1/reports/branding", as)).body.data.brand_name).toBe("Kept");
  });

  it("refuses a body that is not an object", async () => {
    const res = await h.call("PUT", "/v1/reports/branding", { orgId: "org_array" }, ["brand_name"]);
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("body");
  });

  it("lets owners, admins and developers set it, and refuses finance and read-only members", async () => {
    for (const role of ["owner", "admin", "member"] as const) {
      const res = await h.call("PUT", "/v1/reports/branding", { orgId: "org_roles", role }, { brand_name: `Set by ${role}` });
      expect(res.status).toBe(200);
    }
    for (const role of ["billing", "readonly"] as const) {
      const res = await h.call("PUT", "/v1/reports/branding", { orgId: "org_roles", role }, { brand_name: `Set by ${role}` });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("permission_denied");
    }
    expect((await h.call("GET", "/v1/reports/branding", { orgId: "org_roles" })).body.data.brand_name).toBe("Set by member");
  });

  it("keeps each organisation's branding to itself", async () => {
    await h.call("PUT", "/v1/reports/branding", { orgId: "org_one" }, { brand_name: "One" });
    const other = await h.call("GET", "/v1/reports/branding", { orgId: "org_two", orgName: "Two" });
    expect(other.body.data).toEqual({ org_name: "Two", brand_name: null, brand_logo: null, brand_footer: null });
  });
});
