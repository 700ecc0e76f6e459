// tests/runtime/cri's client: kubelet's calls to containerd's CRI plugin,
// made as kubelet makes them (cri-lib.mjs: gRPC on containerd's socket,
// kubelet's own api.proto loaded at run time, no generated code), for one
// runtime handler.  Each step prints one line "NAME value..." that the shell test
// asserts on; a call that fails prints "NAME error CODE MESSAGE" and the
// run goes on with what still makes sense.
//   node cri-client.mjs GRPC_JS_DIR PROTO_LOADER_DIR PROTO SOCKET [SPDY_TRANSPORT_DIR]
// Environment (set by tests/runtime/cri): CRI_HANDLER, CRI_IMAGE,
// CRI_LOGDIR, CRI_CGROUP_PARENT (cgroupfs form, from the cgroup root),
// CRI_AIRLOCK_EXE (the runtime's binary: its stand-ins and VM processes), CRI_STOP_TIMEOUT,
// CRI_SLOWDOWN (LAB_SLOWDOWN), CRI_POD_NET (1: also a pod with a network
// namespace of its own, made by CNI).
import { readFileSync, readdirSync, readlinkSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import { criConnect, NS, podConfig as pod0, containerConfig as ctr0, sleep, ms } from './cri-lib.mjs';

const [grpcDir, loaderDir, protoPath, sock, spdyDir] = process.argv.slice(2);
const env = process.env;
const HANDLER = env.CRI_HANDLER, IMAGE = env.CRI_IMAGE, LOGDIR = env.CRI_LOGDIR;
const CG_PARENT = env.CRI_CGROUP_PARENT, VM_EXE = env.CRI_AIRLOCK_EXE;
const STOP_TIMEOUT = Number(env.CRI_STOP_TIMEOUT || 3);
const SLOW = Number(env.CRI_SLOWDOWN || 1);

const { rt, img, call } = criConnect(grpcDir, loaderDir, protoPath, sock, SLOW);

const out = (...a) => console.log(a.map(String).join(' '));
const secs = (t0) => ((ms() - t0) / 1000).toFixed(1);
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

// --- a pod and a container, kubelet's shape (cri-lib.mjs) ------------------
const podConfig = (name, network, ports, annotations) =>
  pod0({ name, uid: crypto.randomUUID(), network, logdir: LOGDIR, cgroupParent: CG_PARENT, ports, annotations });
const containerConfig = (name, command, resources, mounts) => ctr0(name, IMAGE, command, resources, mounts);
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

// --- egress: two HTTP servers of the client's own on the host's loopback
// (in the process, so they end with it, whatever happened).  A pod's
// allowlist (io.airlock.allow-ip) names the first; the second listens
// too, so that a refusal is the allowlist's and not a closed port.
// 127.0.0.2, outside the guest's no_proxy (localhost,127.0.0.1,::1): a
// client that honours no_proxy still asks the proxy.
const EGRESS_HOST = '127.0.0.2';
function serve(body) {
  return new Promise((resolve, reject) => {
    const s = { hits: 0 };
    s.server = http.createServer((req, res) => { s.hits++; res.end(body); });
    s.server.on('error', reject);
    s.server.listen(0, EGRESS_HOST, () => { s.port = s.server.address().port; s.server.unref(); resolve(s); });
  });
}
let allowed, other;
await step('egress-servers', async () => {
  allowed = await serve('egress-page-from-the-host\n');
  other = await serve('not-for-the-guest\n');
  out('egress-servers', 'ok');
});
// A container's lines: "PROXY? ALLOWED-PAGE WGET-STATUS|NC-STATUS|NC-REASON"
// from sh: wget through $http_proxy (or the one forced), then the same
// request written to the guest's proxy by nc, its answer's status line
// and its body (the proxy's reason).
const proxyTry = (port, proxy = '$http_proxy') =>
  `r=$(http_proxy=${proxy} wget -O /dev/null http://${EGRESS_HOST}:${port}/ 2>&1 | grep -o "HTTP/1.[01] [0-9]*" | head -n 1); ` +
  `echo "wget-${port}=\${r:-none}"; ` +
  `printf "GET http://${EGRESS_HOST}:${port}/ HTTP/1.0\\r\\nHost: ${EGRESS_HOST}:${port}\\r\\n\\r\\n" | nc 127.0.0.1 3128 | ` +
  `tr -d "\\r" | sed -n "1s/^/proxy-${port}=/p; \\$s/^/reason-${port}=/p"`;
const ctrLines = async (id) => (await logOf(id)).split('\n').map((l) => l.split(' ').slice(3).join(' ')).filter(Boolean);
const field = (lines, k) => (lines.find((l) => l.startsWith(`${k}=`)) || `${k}=-`).slice(k.length + 1);

// --- pod 1: the host's network ---------------------------------------------
// The pod's VM's RAM by annotation (pod_annotations passes io.airlock.*).
const pod = podConfig('hostnet', NS.NODE, [], { 'io.airlock.pod-memory-mib': '256' });
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
  out('exec-stream', JSON.stringify(text(r, 1)), execStatus(r));
});
let attachUrl;
await step('attach', async () => {
  attachUrl = (await call(rt, 'Attach', { container_id: longId, stdout: true, stderr: true })).url;
  out('attach', attachUrl.replace(/[^/]+$/, 'TOKEN'));
});
// The container prints a tick a second: attached, the next one arrives.
await step('attach-stream', async () => {
  const r = await wsStream(attachUrl, { until: (c) => /tick\n/.test(c[1] || '') });
  out('attach-stream', /tick\n/.test(text(r, 1)));
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
      undefined, shared),
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
      undefined, shared),
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
// --- another pod, beside pod 1: egress by annotation -------------------------
// The host's network (the broker dials from there), the smallest VM, and
// an allowlist of one address and port: the first server's.  Its
// container fetches that page through the guest's proxy with busybox's
// wget, whose http_proxy the runtime set; the other server's port is
// refused, before any connection to it.  Pod 1 still runs: the
// allowlist is one pod's, not the node's.
if (allowed) {
  const podE = podConfig('egress', NS.NODE, [], {
    'io.airlock.pod-memory-mib': '128', 'io.airlock.allow-ip': `${EGRESS_HOST}:${allowed.port}`,
  });
  let podEId, fetchId;
  await step('runp-egress', async () => {
    const t0 = ms();
    podEId = (await call(rt, 'RunPodSandbox', { config: podE, runtime_handler: HANDLER })).pod_sandbox_id;
    const s = (await call(rt, 'PodSandboxStatus', { pod_sandbox_id: podEId })).status;
    out('runp-egress', s.state, `${secs(t0)}s`);
  });
  await step('egress-fetch', async () => {
    fetchId = (await call(rt, 'CreateContainer', {
      pod_sandbox_id: podEId, sandbox_config: podE,
      config: containerConfig('fetch', ['sh', '-c',
        `echo "proxy=$HTTP_PROXY|$https_proxy"; echo "page=$(wget -qO- http://${EGRESS_HOST}:${allowed.port}/)"; ` +
        `${proxyTry(other.port)}; echo fetched; exec sleep 100000`]),
    })).container_id;
    await call(rt, 'StartContainer', { container_id: fetchId });
    const end = Date.now() + 120 * SLOW * 1000;
    let l = [];
    while (Date.now() < end && !(l = await ctrLines(fetchId)).includes('fetched')) await sleep(300);
    const p = other.port;
    out('egress-fetch', field(l, 'proxy'), JSON.stringify(field(l, 'page')), allowed.hits);
    out('egress-denied', field(l, `wget-${p}`).replace(' ', '/'), field(l, `proxy-${p}`).replace(/ /g, '/'),
      other.hits, JSON.stringify(field(l, `reason-${p}`)));
  });
  // kubectl exec's processes get the proxy too.
  await step('egress-exec', async () => {
    const r = await call(rt, 'ExecSync', {
      container_id: fetchId, cmd: ['sh', '-c', `wget -qO- http://${EGRESS_HOST}:${allowed.port}/`], timeout: 60 * SLOW,
    });
    out('egress-exec', r.exit_code, JSON.stringify(r.stdout.toString()), allowed.hits);
  });
  // Meanwhile pod 1 has no egress annotation: its containers get no
  // proxy variables, and its guest's proxy, asked anyway, refuses the
  // server the egress pod may reach (egress is off), which sees no
  // request from it.
  await step('egress-none', async () => {
    const hits = allowed.hits;
    const id = (await call(rt, 'CreateContainer', {
      pod_sandbox_id: podId, sandbox_config: pod,
      config: containerConfig('noegress', ['sh', '-c',
        'echo proxy-vars=$(env | grep -ci proxy); ' + proxyTry(allowed.port, 'http://127.0.0.1:3128')]),
    })).container_id;
    await call(rt, 'StartContainer', { container_id: id });
    const s = await waitState(id, 'CONTAINER_EXITED', 120);
    const l = await ctrLines(id);
    await call(rt, 'RemoveContainer', { container_id: id });
    const p = allowed.port;
    out('egress-none', s.exit_code, field(l, 'proxy-vars'), field(l, `wget-${p}`).replace(' ', '/'),
      field(l, `proxy-${p}`).replace(/ /g, '/'), allowed.hits - hits, JSON.stringify(field(l, `reason-${p}`)));
  });
  await step('egress-teardown', async () => {
    if (fetchId) {
      await call(rt, 'StopContainer', { container_id: fetchId, timeout: 1 });
      await call(rt, 'RemoveContainer', { container_id: fetchId });
    }
    await call(rt, 'StopPodSandbox', { pod_sandbox_id: podEId });
    await call(rt, 'RemovePodSandbox', { pod_sandbox_id: podEId });
    out('egress-teardown', 'ok', other.hits);
  });
}
await step('stop', async () => {
  const t0 = ms();
  await call(rt, 'StopContainer', { container_id: longId, timeout: STOP_TIMEOUT });
  const took = (ms() - t0) / 1000;
  const s = await containerState(longId);
  // Killed after the timeout: not before it, and not long after.
  out('stop', s.state, s.exit_code, s.reason, took >= STOP_TIMEOUT, took < STOP_TIMEOUT + 20 * SLOW, `${took.toFixed(1)}s`);
});
// Containers run to their end with a 128 MiB memory limit (their VM's
// RAM), and their status once exited.  busybox's tail keeps /dev/zero's
// endless line in memory until the guest's kernel kills it.  Under runc
// the host kernel's kill in the container's cgroup tells containerd's
// shim; here the runtime makes the host count the guest's
// (docs/kubernetes.md, "Out of memory").  The shim's TaskOOM and the
// exit are two events: the reason may trail the state by a moment, as
// it may under runc.
const oomIds = [];
async function runToEnd(name, command) {
  const id = (await call(rt, 'CreateContainer', {
    pod_sandbox_id: podId, sandbox_config: pod,
    config: containerConfig(name, command, { memory_limit_in_bytes: 128 * 1024 * 1024 }),
  })).container_id;
  oomIds.push(id);
  await call(rt, 'StartContainer', { container_id: id });
  let s = await waitState(id, 'CONTAINER_EXITED', 180);
  const t0 = ms();
  while (s.state === 'CONTAINER_EXITED' && s.reason !== 'OOMKilled' && ms() - t0 < 5000 * SLOW) {
    await sleep(200);
    s = await containerState(id);
  }
  return { s, after: `${secs(t0)}s-after-exit` };
}
await step('oom', async () => {
  const { s, after } = await runToEnd('oom', ['tail', '/dev/zero']);
  out('oom', s.state, s.exit_code, s.reason, after);
  // The runtime's word if the host's count could not be moved.
  out('oom-log', JSON.stringify(existsSync(s.log_path) ? readFileSync(s.log_path, 'utf8').slice(-400) : '-'));
});
// A SIGKILL that is no OOM kill (the shell passes on its child's 137):
// not OOMKilled.
await step('kill-not-oom', async () => {
  const { s } = await runToEnd('killed', ['sh', '-c', 'sleep 100 & kill -9 $!; wait $!']);
  out('kill-not-oom', s.state, s.exit_code, s.reason);
});
// A child killed, its shell living on to exit 3: in a pod, not told
// (docs/kubernetes.md).  Last of the pod's OOM cases: no member asks the
// pod's stand-in after it, so the guest's log still holds the kill when
// the pod ends (the 'pause-oom' step).
await step('oom-child', async () => {
  const { s, after } = await runToEnd('oomchild', ['sh', '-c', 'tail /dev/zero; echo survived; exit 3']);
  out('oom-child', s.state, s.exit_code, s.reason, after);
});
let termId;
// A container that honours SIGTERM: StopContainer's grace period is not
// waited out, and its exit code is its own.
const GRACE = 30;
await step('stop-term', async () => {
  termId = (await call(rt, 'CreateContainer', {
    pod_sandbox_id: podId, sandbox_config: pod,
    config: containerConfig('graceful', ['sh', '-c', "trap 'echo got-term; exit 0' TERM; echo term-ready; while :; do sleep 1; done"]),
  })).container_id;
  await call(rt, 'StartContainer', { container_id: termId });
  const log = (await containerState(termId)).log_path;
  const end = Date.now() + 60 * SLOW * 1000;
  while (Date.now() < end && !(existsSync(log) && readFileSync(log, 'utf8').includes('term-ready'))) await sleep(200);
  const t0 = ms();
  await call(rt, 'StopContainer', { container_id: termId, timeout: GRACE });
  const took = secs(t0);
  const s = await containerState(termId);
  out('stop-term', s.state, s.exit_code, s.reason, readFileSync(log, 'utf8').includes('got-term'), `${took}s-of-${GRACE}s`);
});
await step('rm', async () => {
  for (const id of [exitId, longId, ...oomIds, termId]) if (id) await call(rt, 'RemoveContainer', { container_id: id });
  const r = await call(rt, 'ListContainers', { filter: { pod_sandbox_id: podId } });
  out('rm', r.containers.length);
});
// The pause ending on its own while the pod VM's log still holds the
// 'oomchild' member's kill: its stand-in then gives the sandbox
// container its OOM verdict (containerd's StopPodSandbox SIGKILLs the
// stand-in, which then gives none; a pause stopped with SIGTERM exits).
// The test's pause is a shell with a TERM trap that waits on a sleep:
// TERM through its stand-in (which passes it on to the pause alone),
// then the sleep killed by an exec in the sandbox container.
await step('pause-ends', async () => {
  let standin, argv;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const a = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (readlinkSync(`/proc/${p}/exe`) === VM_EXE && a[1] !== 'sandbox-vm' &&
          readFileSync(`/proc/${p}/cgroup`, 'utf8').trim().endsWith(`/${podId}`)) {
        standin = Number(p);
        argv = a;
      }
    } catch { /* gone */ }
  }
  if (!standin || argv.indexOf('--root') < 0) {
    out('pause-ends', 'error', 'no stand-in of the sandbox container with --root');
    return;
  }
  process.kill(standin, 'SIGTERM');
  try {
    execFileSync(argv[0], ['--root', argv[argv.indexOf('--root') + 1], 'exec', podId, 'killall', 'sleep'],
                 { stdio: 'ignore', timeout: 60000 * SLOW });
  } catch { /* the VM may end under it */ }
  const end = Date.now() + 60000 * SLOW;
  let s;
  do {
    await sleep(200);
    s = (await call(rt, 'PodSandboxStatus', { pod_sandbox_id: podId })).status;
  } while ((existsSync(`/proc/${standin}`) || s.state !== 'SANDBOX_NOTREADY') && Date.now() < end);
  out('pause-ends', !existsSync(`/proc/${standin}`), s.state);
});
await step('stopp', async () => {
  const t0 = ms();
  await call(rt, 'StopPodSandbox', { pod_sandbox_id: podId });
  const s = (await call(rt, 'PodSandboxStatus', { pod_sandbox_id: podId })).status;
  out('stopp', s.state, `${secs(t0)}s`);
});
// The host kernel's kills counted for the runtime (container_oom.c's
// sacrificial child: "oom-kill:...,oom_memcg=CGROUP" in its log) in the
// pod sandbox's cgroup, whose id ends its path, and in the first OOM
// container's: the pause's verdict is its own, never a member's (the
// guest's log is the pod VM's), while the 'oom' container's kill is
// counted once.
await step('pause-oom', async () => {
  let log;
  try { log = execFileSync('dmesg', [], { encoding: 'utf8', maxBuffer: 64 << 20 }); } catch (e) {
    out('pause-oom', 'error', 'dmesg', String(e?.message).split('\n')[0]);
    return;
  }
  const kills = (id) => log.split('\n').filter((l) => id && l.includes('oom-kill:') &&
                                                    new RegExp(`oom_memcg=[^,]*/${id},`).test(l)).length;
  out('pause-oom', kills(podId), kills(oomIds[0]));
});
await step('rmp', async () => {
  await call(rt, 'RemovePodSandbox', { pod_sandbox_id: podId });
  const r = await call(rt, 'ListPodSandbox', {});
  out('rmp', r.items.filter((p) => p.id === podId).length);
});

// --- pod 2: a network namespace of its own (CNI) ----------------------------
if (env.CRI_POD_NET === '1') {
  const pod2 = podConfig('podnet', NS.POD, [8080]);
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
  // kubectl port-forward's way in: containerd's streaming server dials
  // localhost:PORT in the pod's network namespace, where the container's
  // listener is mirrored.  Spoken over WebSocket (v4.channel.k8s.io, which
  // the streaming server takes as it takes SPDY): channel 0 the data,
  // 1 the errors, each opened by the port in two bytes.
  await step('pf-net', async () => {
    const u = (await call(rt, 'PortForward', { pod_sandbox_id: pod2Id, port: [8080] })).url;
    const r = await wsStream(u, {
      send: Buffer.from('GET /index.html HTTP/1.0\r\n\r\n'),
      until: (c) => /served-from-pod/.test(c[0] || '') || (c[1] || '').length > 2,
    });
    out('pf-net', r.ch[0]?.readUInt16LE(0), /^HTTP\/1\.[01] 200/.test(text(r, 0, 2)),
      /served-from-pod/.test(text(r, 0, 2)), JSON.stringify(text(r, 1, 2)));
  });
  // The same through SPDY/3.1, as kubectl port-forward speaks it.
  await step('pf-spdy', async () => {
    if (!spdyDir) return out('pf-spdy', 'skip', 'no spdy-transport (tests/runtime/cri-fetch)');
    const u = (await call(rt, 'PortForward', { pod_sandbox_id: pod2Id, port: [8080] })).url;
    const r = await spdyPortForward(u, 8080, Buffer.from('GET /index.html HTTP/1.0\r\n\r\n'));
    out('pf-spdy', r.protocol, /^HTTP\/1\.[01] 200/.test(r.data), /served-from-pod/.test(r.data), JSON.stringify(r.error));
  });
  // A port nothing listens on: refused, and the error channel says so.
  await step('pf-refused', async () => {
    const u = (await call(rt, 'PortForward', { pod_sandbox_id: pod2Id, port: [9090] })).url;
    const r = await wsStream(u, { send: Buffer.from('x'), until: (c) => (c[1] || '').length > 2 });
    out('pf-refused', /refused/.test(text(r, 1, 2)), JSON.stringify(text(r, 1, 2).slice(0, 200)));
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
for (const s of [allowed, other]) s?.server.close();

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

// wsStream URL {send, until, protocol}: kubelet's streaming protocol over
// WebSocket (what kubectl speaks to the URLs Exec, Attach and PortForward
// return; channel.k8s.io: each binary frame's first byte is its channel:
// for exec 1 stdout, 2 stderr, 3 the status as JSON; for port-forward 0
// the data, 1 the errors).  Node 20 has no WebSocket client: this is the
// little of RFC 6455 it needs.  send: bytes for channel 0, sent once
// upgraded.  It ends when the server closes, or once until(channels)
// holds (channels: each one's bytes as a latin1 string so far).
// Resolves {ch: channel -> Buffer}.
function wsStream(url, { send, until, protocol = 'v4.channel.k8s.io' } = {}) {
  return new Promise((resolve, reject) => {
    const key = crypto.randomBytes(16).toString('base64');
    const req = http.get(url, {
      headers: {
        Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': key, 'Sec-WebSocket-Protocol': protocol,
      },
      timeout: 120000 * SLOW,
    });
    req.on('response', (res) => reject(new Error(`HTTP ${res.statusCode}, no upgrade`)));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.on('upgrade', (res, socket, head) => {
      let buf = head;
      const ch = {};
      const done = () => { clearTimeout(timer); socket.destroy(); resolve({ ch }); };
      const timer = setTimeout(done, 60000 * SLOW); // what came by then
      if (send) socket.write(wsClientFrame(Buffer.concat([Buffer.from([0]), send])));
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
            ch[p[0]] = Buffer.concat([ch[p[0]] || Buffer.alloc(0), p.subarray(1)]);
            const seen = Object.fromEntries(Object.entries(ch).map(([k, v]) => [k, v.toString('latin1')]));
            if (until && until(seen)) return done();
          }
        }
      });
      socket.on('end', done);
      socket.on('error', done);
    });
  });
}
// spdyPortForward URL PORT BYTES: kubectl port-forward's own protocol to
// the URL PortForward returned: an HTTP upgrade to SPDY/3.1 offering
// portforward.k8s.io, then, as kubectl does, two streams with the
// headers streamType (error, then data), port and requestID; the error
// stream closed for writing, BYTES written to the data stream, whose
// bytes come back until the server ends it.  npm's spdy-transport frames
// the SPDY.  Resolves {protocol, data, error}.
function spdyPortForward(url, port, bytes) {
  const spdy = createRequire(`${spdyDir}/node_modules/`)('spdy-transport');
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'portforward.k8s.io' },
      timeout: 120000 * SLOW,
    });
    req.on('response', (res) => reject(new Error(`HTTP ${res.statusCode}, no upgrade`)));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.on('upgrade', (res, socket, head) => {
      if (head.length) socket.unshift(head);
      const conn = spdy.connection.create(socket, { protocol: 'spdy', isServer: false });
      conn.start(3.1);
      let data = Buffer.alloc(0), error = '', ended = false;
      const done = () => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        socket.destroy();
        resolve({ protocol: res.headers['x-stream-protocol-version'] || '-', data: data.toString(), error });
      };
      const timer = setTimeout(done, 60000 * SLOW);
      const open = (type) => conn.request({
        method: 'POST', path: '/', headers: { streamtype: type, port: String(port), requestid: '0' },
      });
      const errs = open('error');
      errs.on('data', (d) => { error += d; });
      errs.on('error', done);
      errs.end();
      const s = open('data');
      s.on('data', (d) => { data = Buffer.concat([data, d]); });
      s.on('end', done);
      s.on('error', done);
      s.write(bytes);
      conn.on('error', done);
    });
    req.end();
  });
}
// A client's frame: binary, final, masked as RFC 6455 requires.
function wsClientFrame(payload) {
  const mask = crypto.randomBytes(4);
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x82, 0x80 | n])
    : Buffer.from([0x82, 0x80 | 126, n >> 8, n & 0xff]);
  const body = Buffer.from(payload);
  for (let i = 0; i < n; i++) body[i] ^= mask[i % 4];
  return Buffer.concat([head, mask, body]);
}
// Channel n's bytes as text, from byte `skip` on (port-forward's
// channels start with the port).
function text(r, n, skip = 0) {
  return r.ch[n] ? r.ch[n].subarray(skip).toString() : '';
}
// Exec's status channel: "Success", or "Failure/CODE" for an exit code.
function execStatus(r) {
  if (!r.ch[3]?.length) return '-';
  const j = JSON.parse(r.ch[3].toString());
  const code = j.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
  return `${j.status}${code ? `/${code}` : ''}`;
}
