// tests/runtime/cri's client: kubelet's calls to containerd's CRI plugin,
// made as kubelet makes them (gRPC on containerd's socket, kubelet's own
// api.proto loaded at run time, no generated code), for one runtime
// handler.  Each step prints one line "NAME value..." that the shell test
// asserts on; a call that fails prints "NAME error CODE MESSAGE" and the
// run goes on with what still makes sense.
//   node cri-client.mjs GRPC_JS_DIR PROTO_LOADER_DIR PROTO SOCKET
// Environment (set by tests/runtime/cri): CRI_HANDLER, CRI_IMAGE,
// CRI_LOGDIR, CRI_CGROUP_PARENT (cgroupfs form, from the cgroup root),
// CRI_AIRLOCK_EXE (the runtime's binary: its stand-ins and VM processes), CRI_STOP_TIMEOUT,
// CRI_SLOWDOWN (LAB_SLOWDOWN), CRI_POD_NET (1: also a pod with a network
// namespace of its own, made by CNI).
import { createRequire } from 'node:module';
import { readFileSync, readdirSync, readlinkSync, existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import crypto from 'node:crypto';

const [grpcDir, loaderDir, protoPath, sock] = process.argv.slice(2);
const grpc = createRequire(`${grpcDir}/node_modules/`)('@grpc/grpc-js');
const loader = createRequire(`${loaderDir}/node_modules/`)('@grpc/proto-loader');
const env = process.env;
const HANDLER = env.CRI_HANDLER, IMAGE = env.CRI_IMAGE, LOGDIR = env.CRI_LOGDIR;
const CG_PARENT = env.CRI_CGROUP_PARENT, VM_EXE = env.CRI_AIRLOCK_EXE;
const STOP_TIMEOUT = Number(env.CRI_STOP_TIMEOUT || 3);
const SLOW = Number(env.CRI_SLOWDOWN || 1);

const def = loader.loadSync(protoPath, { keepCase: true, longs: String, enums: String, defaults: true });
const v1 = grpc.loadPackageDefinition(def).runtime.v1;
const rt = new v1.RuntimeService(`unix://${sock}`, grpc.credentials.createInsecure());
const img = new v1.ImageService(`unix://${sock}`, grpc.credentials.createInsecure());

const out = (...a) => console.log(a.map(String).join(' '));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ms = () => Number(process.hrtime.bigint() / 1000000n);
const secs = (t0) => ((ms() - t0) / 1000).toFixed(1);
// One unary call, bounded as kubelet bounds its own (its default is 2 min;
// a VM boot in the lab is slower than a container's start).
function call(svc, method, req, timeoutS = 240) {
  return new Promise((resolve, reject) =>
    svc[method](req, { deadline: new Date(Date.now() + timeoutS * SLOW * 1000) },
      (e, r) => (e ? reject(e) : resolve(r))));
}
async function step(name, fn) {
  try { await fn(); } catch (e) {
    out(name, 'error', e?.code ?? e?.constructor?.name, String(e?.details ?? e?.message).split('\n')[0].slice(0, 400));
  }
}
// The processes of airlock's binary alive now (each container's stand-in
// and VM process): what says a container runs under airlock here.
function airlockProcs() {
  const found = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readlinkSync(`/proc/${p}/exe`) === VM_EXE)
        found.push(`${readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').slice(0, 2).join(' ')} in ${
          readFileSync(`/proc/${p}/cgroup`, 'utf8').trim().split('/').slice(-2).join('/')}`);
    } catch { /* gone */ }
  }
  return found;
}
async function containerState(id) {
  return (await call(rt, 'ContainerStatus', { container_id: id })).status;
}
async function waitState(id, want, seconds) {
  const end = Date.now() + seconds * SLOW * 1000;
  let s;
  do {
    s = await containerState(id);
    if (s.state === want) return s;
    await sleep(300);
  } while (Date.now() < end);
  return s;
}

// --- a pod: its sandbox config, kubelet's shape -----------------------------
const NS = { POD: 'POD', CONTAINER: 'CONTAINER', NODE: 'NODE' };
function podConfig(name, network, annotations) {
  return {
    metadata: { name, uid: crypto.randomUUID(), namespace: 'airlock-cri', attempt: 0 },
    annotations: annotations || {},
    hostname: name,
    log_directory: `${LOGDIR}/${name}`,
    labels: { test: 'airlock-cri' },
    linux: {
      cgroup_parent: CG_PARENT,
      security_context: { namespace_options: { network, pid: NS.CONTAINER, ipc: NS.POD } },
    },
  };
}
function containerConfig(name, command, resources, mounts) {
  return {
    metadata: { name, attempt: 0 },
    image: { image: IMAGE },
    command,
    log_path: `${name}.log`,
    labels: { test: 'airlock-cri' },
    linux: resources ? { resources } : {},
    mounts: mounts || [],
  };
}
// The VMs alive now: `airlock sandbox-vm` processes whose parent is not
// one (a VM process forks its egress broker and keeps a parent outside
// its jail, all under that name).
function vmProcs() {
  const vm = (pid) => {
    try {
      return readlinkSync(`/proc/${pid}/exe`) === VM_EXE &&
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('airlock\0sandbox-vm\0');
    } catch { return false; }
  };
  let n = 0;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || !vm(p)) continue;
    try {
      const ppid = /^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))[1];
      if (!vm(ppid)) n++;
    } catch { /* gone */ }
  }
  return n;
}
async function logOf(id) {
  const s = await containerState(id);
  return existsSync(s.log_path) ? readFileSync(s.log_path, 'utf8') : '';
}

await step('version', async () => {
  const r = await call(rt, 'Version', { version: 'v1' });
  out('version', r.runtime_name, r.runtime_version, r.runtime_api_version);
});
await step('status', async () => {
  const r = await call(rt, 'Status', {});
  const c = Object.fromEntries(r.status.conditions.map((x) => [x.type, x.status]));
  out('status', c.RuntimeReady);
});
await step('image', async () => {
  const r = await call(img, 'ImageStatus', { image: { image: IMAGE } });
  out('image', r.image ? r.image.repo_tags.includes(IMAGE) : 'missing');
});

// --- pod 1: the host's network ---------------------------------------------
// The pod's VM's RAM by annotation (pod_annotations passes io.airlock.*).
const pod = podConfig('hostnet', NS.NODE, { 'io.airlock.pod-memory-mib': '640' });
let podId, exitId, longId;
let podProcs = 0;
await step('runp', async () => {
  const t0 = ms();
  podId = (await call(rt, 'RunPodSandbox', { config: pod, runtime_handler: HANDLER })).pod_sandbox_id;
  out('runp', podId.length, `${secs(t0)}s`);
});
await step('pstat', async () => {
  const s = (await call(rt, 'PodSandboxStatus', { pod_sandbox_id: podId })).status;
  podProcs = airlockProcs().length;
  out('pstat', s.state, s.metadata.name, s.runtime_handler || '-', podProcs);
});

// A container that writes a line to each stream and exits 3.
await step('create-exit', async () => {
  const t0 = ms();
  exitId = (await call(rt, 'CreateContainer', {
    pod_sandbox_id: podId, sandbox_config: pod,
    config: containerConfig('exit3', ['sh', '-c', 'echo cri-stdout-line; echo cri-stderr-line >&2; exit 3']),
  })).container_id;
  out('create-exit', exitId.length, `${secs(t0)}s`);
});
await step('start-exit', async () => {
  const t0 = ms();
  await call(rt, 'StartContainer', { container_id: exitId });
  out('start-exit', 'ok', `${secs(t0)}s`);
});
await step('cstat-exit', async () => {
  const s = await waitState(exitId, 'CONTAINER_EXITED', 120);
  out('cstat-exit', s.state, s.exit_code, s.reason);
});
await step('log', async () => {
  const s = await containerState(exitId);
  const lines = readFileSync(s.log_path, 'utf8').split('\n');
  // CRI log format: RFC 3339 time, stream, P(artial) or F(ull), the text.
  const re = (stream, text) => new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[0-9:.]+(Z|[+-]\\d\\d:\\d\\d) ${stream} F ${text}$`);
  out('log', s.log_path === `${LOGDIR}/hostnet/exit3.log`,
    lines.some((l) => re('stdout', 'cri-stdout-line').test(l)),
    lines.some((l) => re('stderr', 'cri-stderr-line').test(l)));
});

// A container that ignores SIGTERM and runs until killed, with kubelet's
// resources for a pod with limits (its memory limit is the VM's RAM).
const MEM = 256 * 1024 * 1024;
await step('create-long', async () => {
  const t0 = ms();
  longId = (await call(rt, 'CreateContainer', {
    pod_sandbox_id: podId, sandbox_config: pod,
    config: containerConfig('long', ['sh', '-c', "trap '' TERM; echo long-started; while :; do echo tick; sleep 1; done"],
      { cpu_period: 100000, cpu_quota: 100000, cpu_shares: 1024, memory_limit_in_bytes: MEM }),
  })).container_id;
  out('create-long', longId.length, `${secs(t0)}s`);
});
await step('start-long', async () => {
  const t0 = ms();
  await call(rt, 'StartContainer', { container_id: longId });
  const s = await waitState(longId, 'CONTAINER_RUNNING', 30);
  const procs = airlockProcs();
  out('start-long', s.state, `${secs(t0)}s`, procs.length > podProcs);
  out('procs', procs.length, JSON.stringify(procs));
});
await step('execsync', async () => {
  const t0 = ms();
  const r = await call(rt, 'ExecSync', {
    container_id: longId, cmd: ['sh', '-c', 'echo exec-out; echo exec-err >&2; exit 5'], timeout: 60 * SLOW,
  });
  out('execsync', r.exit_code, JSON.stringify(r.stdout.toString()), JSON.stringify(r.stderr.toString()), `${secs(t0)}s`);
});
let execUrl;
await step('exec', async () => {
  execUrl = (await call(rt, 'Exec', {
    container_id: longId, cmd: ['sh', '-c', 'echo exec-stream-out; exit 4'], stdout: true, stderr: true,
  })).url;
  out('exec', execUrl.replace(/[^/]+$/, 'TOKEN'));
});
await step('exec-stream', async () => {
  const r = await wsStream(execUrl);
  out('exec-stream', JSON.stringify(r.stdout), r.status);
});
let attachUrl;
await step('attach', async () => {
  attachUrl = (await call(rt, 'Attach', { container_id: longId, stdout: true, stderr: true })).url;
  out('attach', attachUrl.replace(/[^/]+$/, 'TOKEN'));
});
// The container prints a tick a second: attached, the next one arrives.
await step('attach-stream', async () => {
  const r = await wsStream(attachUrl, /tick\n/);
  out('attach-stream', /tick\n/.test(r.stdout));
});
await step('portforward', async () => {
  const u = (await call(rt, 'PortForward', { pod_sandbox_id: podId, port: [8080] })).url;
  out('portforward', u.replace(/[^/]+$/, 'TOKEN'));
});
await step('update', async () => {
  await call(rt, 'UpdateContainerResources', {
    container_id: longId,
    linux: { cpu_period: 100000, cpu_quota: 50000, cpu_shares: 512, memory_limit_in_bytes: MEM },
  });
  // containerd's runc shim hands the update to the runtime, which writes
  // the container's cgroup (cgroupfs: the parent, then the container's ID).
  const f = `/sys/fs/cgroup${CG_PARENT}/${longId}/cpu.max`;
  out('update', 'ok', existsSync(f) ? readFileSync(f, 'utf8').trim().replace(' ', '/') : 'no-cpu.max');
});
await step('update-nomem', async () => {
  await call(rt, 'UpdateContainerResources', {
    container_id: longId, linux: { cpu_period: 100000, cpu_quota: 70000, cpu_shares: 512 },
  });
  const f = `/sys/fs/cgroup${CG_PARENT}/${longId}/cpu.max`;
  out('update-nomem', 'ok', existsSync(f) ? readFileSync(f, 'utf8').trim().replace(' ', '/') : 'no-cpu.max');
});
await step('stats', async () => {
  const s = (await call(rt, 'ContainerStats', { container_id: longId })).stats;
  const ws = Number(s.memory?.working_set_bytes?.value ?? 0);
  // A booted Linux guest touches far more than 16 MiB of its RAM: less
  // means the VM process is not in what containerd measures.
  out('stats', s.attributes.id === longId, ws > 0, s.cpu ? 'cpu' : '-', ws >= 16 << 20, `${(ws / 1048576).toFixed(1)}MiB`);
});
await step('liststats', async () => {
  const r = await call(rt, 'ListContainerStats', { filter: { pod_sandbox_id: podId } });
  const mine = r.stats.filter((s) => s.attributes.id === longId);
  out('liststats', mine.length, mine.length ? Number(mine[0].memory?.working_set_bytes?.value ?? 0) > 0 : '-');
});
// --- one VM for the pod: two more containers in it, sharing its localhost
// and an emptyDir volume (where kubelet keeps one), each in a root and a
// PID namespace of its own.
const SHARED = `${LOGDIR}/volumes/${pod.metadata.uid}/volumes/kubernetes.io~empty-dir/shared`;
mkdirSync(SHARED, { recursive: true });
const shared = [{ container_path: '/shared', host_path: SHARED }];
let serverId, clientId;
await step('pod-server', async () => {
  serverId = (await call(rt, 'CreateContainer', {
    pod_sandbox_id: podId, sandbox_config: pod,
    config: containerConfig('server', ['sh', '-c',
      'echo server-root >/mine; echo note-from-server >/shared/note; echo server-pid=$$; exec httpd -f -p 127.0.0.1:8081 -h /shared'],
      null, shared),
  })).container_id;
  await call(rt, 'StartContainer', { container_id: serverId });
  const s = await waitState(serverId, 'CONTAINER_RUNNING', 30);
  out('pod-server', s.state, vmProcs());
});
await step('pod-client', async () => {
  clientId = (await call(rt, 'CreateContainer', {
    pod_sandbox_id: podId, sandbox_config: pod,
    config: containerConfig('client', ['sh', '-c',
      'cat /shared/note; n=0; until wget -qO- http://127.0.0.1:8081/note; do n=$((n+1)); [ $n -gt 60 ] && exit 7; sleep 0.5; done; ' +
      'echo client-pid=$$; cat /mine 2>/dev/null || echo no-server-root; echo procs=$(ls /proc | grep -c "^[0-9]"); echo mem=$(awk \'/MemTotal/ { print int($2 / 1024) }\' /proc/meminfo)'],
      null, shared),
  })).container_id;
  await call(rt, 'StartContainer', { container_id: clientId });
  const s = await waitState(clientId, 'CONTAINER_EXITED', 120);
  const log = (await logOf(clientId)).split('\n').map((l) => l.split(' ').slice(3).join(' ')).filter(Boolean);
  out('pod-client', s.exit_code, JSON.stringify(log.join('|')));
});
await step('pod-server-log', async () => {
  const log = (await logOf(serverId)).split('\n').map((l) => l.split(' ').slice(3).join(' ')).filter(Boolean);
  out('pod-server-log', JSON.stringify(log.join('|')));
});
await step('pod-exec', async () => {
  const r = await call(rt, 'ExecSync', {
    container_id: serverId, cmd: ['sh', '-c', 'cat /mine; echo pid1=$(cat /proc/1/comm)'], timeout: 60 * SLOW,
  });
  out('pod-exec', r.exit_code, JSON.stringify(r.stdout.toString()));
});
await step('pod-vms', async () => {
  out('pod-vms', vmProcs());
});
await step('podstats', async () => {
  const r = await call(rt, 'PodSandboxStats', { pod_sandbox_id: podId });
  const ws = Number(r.stats?.linux?.memory?.working_set_bytes?.value ?? 0);
  out('podstats', ws >= 16 << 20, `${(ws / 1048576).toFixed(1)}MiB`);
});
await step('pod-rm-server', async () => {
  await call(rt, 'StopContainer', { container_id: serverId, timeout: 1 });
  const s = await containerState(serverId);
  for (const id of [serverId, clientId]) await call(rt, 'RemoveContainer', { container_id: id });
  out('pod-rm-server', s.state, s.exit_code);
});
// Its slot is free again: a container after it runs.
await step('pod-after', async () => {
  const id = (await call(rt, 'CreateContainer', {
    pod_sandbox_id: podId, sandbox_config: pod,
    config: containerConfig('after', ['sh', '-c', 'cat /mine 2>/dev/null || echo fresh-root']),
  })).container_id;
  await call(rt, 'StartContainer', { container_id: id });
  const s = await waitState(id, 'CONTAINER_EXITED', 120);
  const log = await logOf(id);
  await call(rt, 'RemoveContainer', { container_id: id });
  out('pod-after', s.exit_code, /fresh-root/.test(log));
});
await step('stop', async () => {
  const t0 = ms();
  await call(rt, 'StopContainer', { container_id: longId, timeout: STOP_TIMEOUT });
  const took = (ms() - t0) / 1000;
  const s = await containerState(longId);
  // Killed after the timeout: not before it, and not long after.
  out('stop', s.state, s.exit_code, s.reason, took >= STOP_TIMEOUT, took < STOP_TIMEOUT + 20 * SLOW, `${took.toFixed(1)}s`);
});
await step('rm', async () => {
  for (const id of [exitId, longId]) if (id) await call(rt, 'RemoveContainer', { container_id: id });
  const r = await call(rt, 'ListContainers', { filter: { pod_sandbox_id: podId } });
  out('rm', r.containers.length);
});
await step('stopp', async () => {
  const t0 = ms();
  await call(rt, 'StopPodSandbox', { pod_sandbox_id: podId });
  const s = (await call(rt, 'PodSandboxStatus', { pod_sandbox_id: podId })).status;
  out('stopp', s.state, `${secs(t0)}s`);
});
await step('rmp', async () => {
  await call(rt, 'RemovePodSandbox', { pod_sandbox_id: podId });
  const r = await call(rt, 'ListPodSandbox', {});
  out('rmp', r.items.filter((p) => p.id === podId).length);
});

// --- pod 2: a network namespace of its own (CNI) ----------------------------
if (env.CRI_POD_NET === '1') {
  const pod2 = podConfig('podnet', NS.POD);
  let pod2Id, webId, ip;
  await step('runp-net', async () => {
    const t0 = ms();
    pod2Id = (await call(rt, 'RunPodSandbox', { config: pod2, runtime_handler: HANDLER })).pod_sandbox_id;
    const s = (await call(rt, 'PodSandboxStatus', { pod_sandbox_id: pod2Id })).status;
    ip = s.network?.ip || '';
    out('runp-net', s.state, /^\d+\.\d+\.\d+\.\d+$/.test(ip), `${secs(t0)}s`);
  });
  // A server in the pod: airlock serves the guest's listeners at the
  // pod's address (docs/kubernetes.md, Published ports).
  await step('web', async () => {
    webId = (await call(rt, 'CreateContainer', {
      pod_sandbox_id: pod2Id, sandbox_config: pod2,
      config: containerConfig('web', ['sh', '-c', 'mkdir -p /www && echo served-from-pod >/www/index.html && exec httpd -f -p 8080 -h /www']),
    })).container_id;
    await call(rt, 'StartContainer', { container_id: webId });
    const end = Date.now() + 60 * SLOW * 1000;
    let body = '';
    while (Date.now() < end) {
      body = await get(`http://${ip}:8080/index.html`).catch((e) => `(${e.code})`);
      if (body.startsWith('served-from-pod')) break;
      await sleep(500);
    }
    out('web', JSON.stringify(body.trim()));
  });
  await step('net-teardown', async () => {
    if (webId) {
      await call(rt, 'StopContainer', { container_id: webId, timeout: 1 });
      await call(rt, 'RemoveContainer', { container_id: webId });
    }
    await call(rt, 'StopPodSandbox', { pod_sandbox_id: pod2Id });
    await call(rt, 'RemovePodSandbox', { pod_sandbox_id: pod2Id });
    out('net-teardown', 'ok');
  });
}

await step('end', async () => {
  const c = await call(rt, 'ListContainers', {});
  const p = await call(rt, 'ListPodSandbox', {});
  out('end', c.containers.length, p.items.length);
});
rt.close();
img.close();

function get(url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: 5000 }, (res) => {
      let b = '';
      res.on('data', (d) => { b += d; });
      res.on('end', () => resolve(b));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
  });
}

// wsStream URL [UNTIL]: kubelet's streaming protocol over WebSocket (what kubectl
// exec speaks to the URL Exec returned; channel.k8s.io: each binary frame's
// first byte is its stream: 1 stdout, 2 stderr, 3 the status as JSON).
// Node 20 has no WebSocket client: this is the little of RFC 6455 it needs.
// It ends when the server closes, or once stdout matches the regex UNTIL.
function wsStream(url, until) {
  return new Promise((resolve, reject) => {
    const key = crypto.randomBytes(16).toString('base64');
    const req = http.get(url, {
      headers: {
        Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': key, 'Sec-WebSocket-Protocol': 'v4.channel.k8s.io',
      },
      timeout: 120000 * SLOW,
    });
    req.on('response', (res) => reject(new Error(`HTTP ${res.statusCode}, no upgrade`)));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.on('upgrade', (res, socket, head) => {
      let buf = head, stdout = '', status = '';
      const done = () => { clearTimeout(timer); socket.destroy(); resolve({ stdout, status: status || '-' }); };
      const timer = setTimeout(done, 60000 * SLOW); // what came by then
      socket.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        for (;;) {
          if (buf.length < 2) return;
          const op = buf[0] & 0x0f;
          let len = buf[1] & 0x7f, off = 2;
          if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); off = 4; }
          else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); off = 10; }
          if (buf.length < off + len) return;
          const p = buf.subarray(off, off + len);
          buf = buf.subarray(off + len);
          if (op === 8) return done();
          if ((op === 2 || op === 1) && p.length > 0) {
            if (p[0] === 1) stdout += p.subarray(1).toString();
            if (until && until.test(stdout)) return done();
            if (p[0] === 3 && p.length > 1) {
              const j = JSON.parse(p.subarray(1).toString());
              const code = j.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
              status = `${j.status}${code ? `/${code}` : ''}`;
            }
          }
        }
      });
      socket.on('end', done);
      socket.on('error', done);
    });
  });
}
