/**
 * A DNS server on loopback UDP answering TXT questions from a table the test fills, so the domain check's real
 * resolver (node:dns Resolver pointed here) is what the tests exercise. Names not in the table get NXDOMAIN; a name
 * mapped to [] gets an empty answer (NODATA). Answers live 0 s, so a changed table is what the next lookup finds.
 */
import { Resolver } from "node:dns/promises";

export interface TestDnsServer {
  /** TXT records by lower-case name, each record its strings. */
  txt: Map<string, string[][]>;
  /** resolveTxt through this server, as domainChecks.resolveTxt takes it. */
  resolveTxt(name: string): Promise<string[][]>;
  close(): void;
}

function questionName(msg: Uint8Array): { name: string; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (msg[at] !== 0) {
    labels.push(new TextDecoder().decode(msg.subarray(at + 1, at + 1 + msg[at])));
    at += 1 + msg[at];
  }
  return { name: labels.join(".").toLowerCase(), end: at + 5 }; // the 0 byte, then type and class
}

function answer(query: Uint8Array, txt: Map<string, string[][]>): Uint8Array {
  const { name, end } = questionName(query);
  const type = (query[end - 4] << 8) | query[end - 3];
  const records = type === 16 ? txt.get(name) : undefined;
  const rdatas = (records ?? []).map((strings) => {
    const parts = strings.map((s) => new TextEncoder().encode(s));
    return Uint8Array.from(parts.flatMap((p) => [p.length, ...p]));
  });
  const header = [query[0], query[1], 0x81, records === undefined && !txt.has(name) ? 0x83 : 0x80, 0, 1, 0, rdatas.length, 0, 0, 0, 0];
  const body = rdatas.flatMap((r) => [0xc0, 12, 0, 16, 0, 1, 0, 0, 0, 0, r.length >> 8, r.length & 0xff, ...r]);
  return Uint8Array.from([...header, ...query.subarray(12, end), ...body]);
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[][]>();
  const socket = await Bun.udpSocket({
    hostname: "127.0.0.1",
    socket: { data: (s, data, port, address) => void s.send(answer(new Uint8Array(data), txt), port, address) },
  });
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${socket.port}`]);
  return { txt, resolveTxt: (name) => resolver.resolveTxt(name), close: () => socket.close() };
}
