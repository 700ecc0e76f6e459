// What tests/runtime/cri-client.mjs and tests/bench/cri-bench.mjs share:
// kubelet's CRI reached as kubelet reaches it (gRPC on containerd's
// socket, kubelet's own api.proto loaded at run time, no generated code),
// and pods and containers in kubelet's shape.
import { createRequire } from 'node:module';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const ms = () => Number(process.hrtime.bigint() / 1000000n);

// criConnect(GRPC_JS_DIR, PROTO_LOADER_DIR, PROTO, SOCKET, SLOWDOWN):
// {rt, img, call}; call(svc, method, req[, seconds]) is one unary call,
// bounded as kubelet bounds its own (its default is 2 min; a VM boot in
// the lab is slower than a container's start), stretched by SLOWDOWN.
export function criConnect(grpcDir, loaderDir, protoPath, sock, slow) {
  const grpc = createRequire(`${grpcDir}/node_modules/`)('@grpc/grpc-js');
  const loader = createRequire(`${loaderDir}/node_modules/`)('@grpc/proto-loader');
  const def = loader.loadSync(protoPath, { keepCase: true, longs: String, enums: String, defaults: true });
  const v1 = grpc.loadPackageDefinition(def).runtime.v1;
  const rt = new v1.RuntimeService(`unix://${sock}`, grpc.credentials.createInsecure());
  const img = new v1.ImageService(`unix://${sock}`, grpc.credentials.createInsecure());
  const call = (svc, method, req, timeoutS = 240) => new Promise((resolve, reject) =>
    svc[method](req, { deadline: new Date(Date.now() + timeoutS * slow * 1000) },
      (e, r) => (e ? reject(e) : resolve(r))));
  return { rt, img, call };
}

export const NS = { POD: 'POD', CONTAINER: 'CONTAINER', NODE: 'NODE' };

// A pod's sandbox config, kubelet's shape.  ports: the pod's
// containerPorts, as kubelet passes every one of them (port_mappings:
// host_port 0 unless the pod asks for a hostPort).  A pod on the node's
// network gets no hostname, as from kubelet: it has no UTS namespace of
// its own (runc refuses a hostname there).
export function podConfig({ name, uid, network, logdir, cgroupParent, ports = [], annotations = {} }) {
  return {
    metadata: { name, uid, namespace: 'airlock-cri', attempt: 0 },
    annotations,
    hostname: network === NS.NODE ? '' : name,
    log_directory: `${logdir}/${name}`,
    labels: { test: 'airlock-cri' },
    port_mappings: ports.map((p) => ({ protocol: 'TCP', container_port: p, host_port: 0 })),
    linux: {
      cgroup_parent: cgroupParent,
      security_context: { namespace_options: { network, pid: NS.CONTAINER, ipc: NS.POD } },
    },
  };
}

export function containerConfig(name, image, command, resources, mounts = []) {
  return {
    metadata: { name, attempt: 0 },
    image: { image },
    command,
    log_path: `${name}.log`,
    labels: { test: 'airlock-cri' },
    linux: resources ? { resources } : {},
    mounts,
  };
}
