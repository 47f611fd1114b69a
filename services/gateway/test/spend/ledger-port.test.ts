import { CLIENT_OPTIONS, InProcessServer, insecure } from "@router/grpc-kit";
import { ledger } from "@router/proto";
import { admitStreamsFor } from "../../src/spend/ledger-port";

describe("admitStreamsFor", () => {
  it("keeps the configured streams to a networked ledger and none to one served in process", async () => {
    const networked = new ledger.LedgerServiceClient("127.0.0.1:1", insecure(), CLIENT_OPTIONS);
    const server = new InProcessServer([]);
    try {
      expect(admitStreamsFor(networked, 4)).toBe(4);
      expect(admitStreamsFor(networked, 0)).toBe(0);
      expect(admitStreamsFor(server.client(ledger.LedgerServiceClient), 4)).toBe(0);
    } finally {
      networked.close();
      await server.close();
    }
  });
});
