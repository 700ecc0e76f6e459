// tests/bench/lab-cri's client: kubelet's calls timed through containerd's
// CRI plugin (tests/runtime/cri-lib.mjs), figures only.
//   node cri-bench.mjs GRPC_JS_DIR PROTO_LOADER_DIR PROTO SOCKET
// Environment (set by lab-cri): BENCH_HANDLERS (runtime handlers, e.g.
// "airlock runc"), BENCH_RUNS, BENCH_BUDGET (seconds: no round starts
// after), CRI_IMAGE, CRI_LOGDIR, CRI_CGROUP_PARENT, CRI_SLOWDOWN.
// Prints, one a line:
//   round HANDLER N TOTAL RUNP CREATE START FIRST SECOND  (ms; or "round HANDLER N failed WHY")
//     TOTAL: RunPodSandbox's call to the container's first line in its
//     CRI log file; RUNP, CREATE, START: each call; FIRST: StartContainer's
//     return to that line; SECOND: a second container added to the
//     running pod, CreateContainer's call to its first line (what one
//     VM per pod saves: no boot)
//   mem HANDLER CGROUPS PROCS PSS_KIB RSS_KIB CURRENT_KIB  (a three-container pod)
//   memproc HANDLER PSS_KIB RSS_KIB ARGV0 ARGV1           (each of its processes)
import { readFileSync, existsSync, mkdirSync } from 'node:fs';
import crypto from 'node:crypto';
import { criConnect, NS, podConfig, containerConfig, sleep, ms } from '../runtime/cri-lib.mjs';

const [grpcDir, loaderDir, protoPath, sock] = process.argv.slice(2);
const env = process.env;
const SLOW = Number(env.CRI_SLOWDOWN || 1);
const IMAGE = env.CRI_IMAGE, LOGDIR = env.CRI_LOGDIR, CG_PARENT = env.CRI_CGROUP_PARENT;
const HANDLERS = (env.BENCH_HANDLERS || 'airlock runc').split(/\s+/).filter(Boolean);
const RUNS = Number(env.BENCH_RUNS || 10);
const END = Date.now() + Number(env.BENCH_BUDGET || 900) * 1000;
const { rt, call } = criConnect(grpcDir, loaderDir, protoPath, sock, SLOW);
const out = (...a) => console.log(a.map(String).join(' '));

function pod(name) {
  mkdirSync(`${LOGDIR}/${name}`, { recursive: true });
  return podConfig({ name, uid: crypto.randomUUID(), network: NS.NODE, logdir: LOGDIR, cgroupParent: CG_PARENT });
}
// Until FILE holds TEXT (polled every 10 ms), bounded.
async function waitText(file, text, seconds = 120) {
  const end = Date.now() + seconds * SLOW * 1000;
  while (Date.now() < end) {
    if (existsSync(file) && readFileSync(file, 'utf8').includes(text)) return true;
    await sleep(10);
  }
  throw new Error(`no "${text}" in ${file}`);
}
async function remove(podId) {
  await call(rt, 'StopPodSandbox', { pod_sandbox_id: podId });
  await call(rt, 'RemovePodSandbox', { pod_sandbox_id: podId });
}

// One pod, one container, to its first line; then both removed (not timed).
async function round(handler, n) {
  const cfg = pod(`bench-${handler}-${n}`);
  let podId;
  try {
    const t0 = ms();
    podId = (await call(rt, 'RunPodSandbox', { config: cfg, runtime_handler: handler })).pod_sandbox_id;
    const t1 = ms();
    const id = (await call(rt, 'CreateContainer', {
      pod_sandbox_id: podId, sandbox_config: cfg,
      config: containerConfig('first', IMAGE, ['sh', '-c', 'echo first-line; exec sleep 3600']),
    })).container_id;
    const t2 = ms();
    await call(rt, 'StartContainer', { container_id: id });
    const t3 = ms();
    await waitText(`${cfg.log_directory}/first.log`, 'first-line');
    const t4 = ms();
    const id2 = (await call(rt, 'CreateContainer', {
      pod_sandbox_id: podId, sandbox_config: cfg,
      config: containerConfig('second', IMAGE, ['sh', '-c', 'echo second-line; exec sleep 3600']),
    })).container_id;
    await call(rt, 'StartContainer', { container_id: id2 });
    await waitText(`${cfg.log_directory}/second.log`, 'second-line');
    const t5 = ms();
    out('round', handler, n, t4 - t0, t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4);
  } catch (e) {
    out('round', handler, n, 'failed', String(e?.details ?? e?.message).split('\n')[0].slice(0, 200));
  }
  if (podId) await remove(podId).catch(() => {});
}

function kib(pid, key) {
  const m = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'));
  return m ? Number(m[1]) : 0;
}
// A pod of three containers, running: the memory of every process in the
// pod's cgroups (the sandbox's and each container's, where the runtime
// puts what runs a container: under airlock the stand-ins and the VM
// processes; containerd's shims are in containerd's cgroup, counted by
// neither), and the cgroups' memory.current (page cache included).
async function memPod(handler) {
  const cfg = pod(`mem-${handler}`);
  let podId;
  try {
    podId = (await call(rt, 'RunPodSandbox', { config: cfg, runtime_handler: handler })).pod_sandbox_id;
    const ids = [podId];
    for (const c of ['one', 'two', 'three']) {
      const id = (await call(rt, 'CreateContainer', {
        pod_sandbox_id: podId, sandbox_config: cfg,
        config: containerConfig(c, IMAGE, ['sh', '-c', `echo ${c}-up; exec sleep 3600`]),
      })).container_id;
      await call(rt, 'StartContainer', { container_id: id });
      await waitText(`${cfg.log_directory}/${c}.log`, `${c}-up`);
      ids.push(id);
    }
    await sleep(5000 * SLOW); // the guests' boots settled
    let pss = 0, rss = 0, current = 0, procs = 0, groups = 0;
    for (const id of ids) {
      const dir = `/sys/fs/cgroup${CG_PARENT}/${id}`;
      if (!existsSync(dir)) continue;
      groups++;
      current += Number(readFileSync(`${dir}/memory.current`, 'utf8')) / 1024;
      for (const pid of readFileSync(`${dir}/cgroup.procs`, 'utf8').split('\n').filter(Boolean)) {
        try {
          const p = kib(pid, 'Pss'), r = kib(pid, 'Rss');
          const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
          pss += p; rss += r; procs++;
          out('memproc', handler, p, r, argv[0].split('/').pop(), argv[1] || '-');
        } catch { /* gone */ }
      }
    }
    out('mem', handler, groups, procs, pss, rss, Math.round(current));
  } catch (e) {
    out('mem', handler, 'failed', String(e?.details ?? e?.message).split('\n')[0].slice(0, 200));
  }
  if (podId) await remove(podId).catch(() => {});
}

// A warm-up round each, not counted (first reads of the image, the
// runtime's first root disk), then the handlers interleaved.
for (const h of HANDLERS) await round(h, 0);
for (let n = 1; n <= RUNS && Date.now() < END; n++)
  for (const h of HANDLERS) await round(h, n);
for (const h of HANDLERS) await memPod(h);
rt.close();
