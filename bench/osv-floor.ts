// The floor under bench:osv's latency targets: servers that answer `Query` and `QueryBatch` with fixed bytes, in a
// process of their own like `platform serve`, measured by the same client in the same conditions. A bare node:http
// server for the HTTP mapping, a bare grpc-js server for gRPC; no authentication, matching, SQLite, log line or
// codec. What they take is what the machine, the client and the transports cost before the replica does anything.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';

export interface FloorServers {
  pid: number;
  /** `http://127.0.0.1:port` */
  http: string;
  /** `127.0.0.1:port` */
  grpc: string;
  stop(): Promise<void>;
}

/** A typical hit's answer (one or two records) and a QueryBatch(1000) answer of about two entries per query. */
const QUERY_ANSWER_BYTES = 2 * 1024;
const BATCH_ANSWER_BYTES = 64 * 1024;

const FLOOR_SERVER = `
const http = require('node:http');
const grpc = require(process.env.FLOOR_GRPC_JS);
const query = Buffer.alloc(${QUERY_ANSWER_BYTES}, 0x61);
const batch = Buffer.alloc(${BATCH_ANSWER_BYTES}, 0x62);
const answerOf = (path) => (/batch/i.test(path) ? batch : query);
const web = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    const body = answerOf(req.url);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
const bytes = (b) => b;
const unary = (path) => ({ path, requestStream: false, responseStream: false, requestSerialize: bytes, requestDeserialize: bytes, responseSerialize: bytes, responseDeserialize: bytes });
const server = new grpc.Server();
server.addService(
  { Query: unary('/platform.v1.PlatformOSV/Query'), QueryBatch: unary('/platform.v1.PlatformOSV/QueryBatch') },
  { Query: (_call, done) => done(null, query), QueryBatch: (_call, done) => done(null, batch) },
);
web.listen(0, '127.0.0.1', () => {
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => {
    if (error) throw error;
    console.log(JSON.stringify({ http: 'http://127.0.0.1:' + web.address().port, grpc: '127.0.0.1:' + port }));
  });
});
process.on('SIGTERM', () => process.exit(0));
`;

/** Starts the floor servers in a process of their own; resolves once both listen. */
export async function startFloorServers(): Promise<FloorServers> {
  const require = createRequire(import.meta.url);
  const child = spawn(process.execPath, ['-e', FLOOR_SERVER], {
    env: { ...process.env, FLOOR_GRPC_JS: require.resolve('@grpc/grpc-js') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const ports = JSON.parse(line) as { http: string; grpc: string };
  return {
    pid: child.pid ?? 0,
    ...ports,
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
