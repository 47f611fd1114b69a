import { AllowedHosts, checkTargetUrl, targetUrlProblem } from "@router/outbound";
import { DomainError } from "@router/errors";

describe("target URLs checked when saved", () => {
  it.each([
    ["http://hooks.example.com/x", "must be an https URL"],
    ["not a url", "must be an absolute https URL"],
    ["/relative/path", "must be an absolute https URL"],
    ["ftp://hooks.example.com/x", "must be an https URL"],
    ["https://user:pw@hooks.example.com/x", "must not carry a user name or password"],
    ["https://hooks.example.com:8443/x", "must use the default https port (443)"],
    ["https://localhost/x", "must not name localhost"],
    ["https://api.localhost/x", "must not name localhost"],
    ["https://127.0.0.1/x", "must not be a loopback address"],
    ["https://2130706433/x", "must not be a loopback address"],
    ["https://0x7f.1/x", "must not be a loopback address"],
    ["https://[::1]/x", "must not be a loopback address"],
    ["https://[::ffff:127.0.0.1]/x", "must not be a loopback address"],
    ["https://10.0.0.5/x", "must not be a private address"],
    ["https://172.16.3.4/x", "must not be a private address"],
    ["https://192.168.1.1/x", "must not be a private address"],
    ["https://169.254.169.254/latest/meta-data", "must not be a link-local address (cloud metadata included)"],
    ["https://[fe80::1]/x", "must not be a link-local address (cloud metadata included)"],
    ["https://[fd00:ec2::254]/x", "must not be a unique-local address"],
    ["https://0.0.0.0/x", "must not be an unspecified address"],
    ["https://100.64.0.1/x", "must not be a carrier-grade NAT address"],
    ["https://224.0.0.1/x", "must not be a multicast address"],
    ["https://198.18.0.1/x", "must not be a reserved address"],
    ["https://intranet/x", "must name a public host by its full domain name"],
    [`https://hooks.example.com/${"a".repeat(2100)}`, "must be at most 2048 characters"],
  ])("refuses %s: %s", (url, reason) => {
    expect(targetUrlProblem(url)).toBe(reason);
  });

  it.each(["https://hooks.example.com/services/T0/B0/xyz", "https://hooks.example.com:443/x", "https://93.184.216.34/hook", "https://[2606:4700::1111]/x"])(
    "accepts the public https URL %s",
    (url) => {
      expect(targetUrlProblem(url)).toBeNull();
    },
  );

  it("lets a test-only allowed host through on any port, and nothing else", () => {
    const allowed = new AllowedHosts(["127.0.0.1", "receiver.test"]);
    expect(targetUrlProblem("https://127.0.0.1:8443/hook", allowed)).toBeNull();
    expect(targetUrlProblem("https://receiver.test:9999/hook", allowed)).toBeNull();
    expect(targetUrlProblem("https://127.0.0.2:8443/hook", allowed)).toBe("must use the default https port (443)");
    expect(targetUrlProblem("http://127.0.0.1:8443/hook", allowed)).toBe("must be an https URL");
  });

  it("throws a 400 naming the field", () => {
    let thrown: unknown;
    try {
      checkTargetUrl("https://10.0.0.5/hook", "target");
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect((thrown as DomainError).status).toBe(400);
    expect((thrown as DomainError).message).toBe("target: must not be a private address");
    expect((thrown as DomainError).details).toEqual({ field: "target" });
  });
});
