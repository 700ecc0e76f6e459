// tests/bench/lab-e2b's timed client: the same work through E2B's SDK and
// through /v1 (node's fetch, the same runtime), interleaved, each figure
// one line "CASE ms" or "CASE MB/s" on stdout.
//   node e2b-peer.mjs SDK_DIR PORT TOKEN RUNS MIB
const [sdk, port, token, runs, mib] = process.argv.slice(2);
const { Sandbox } = await import(`${sdk}/node_modules/e2b/dist/index.mjs`);
const base = `http://127.0.0.1:${port}`;
const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => Number(process.hrtime.bigint()) / 1e6;

async function v1(method, path, body) {
  const r = await fetch(base + path, { method, headers: auth, body: body && JSON.stringify(body) });
  return r;
}
async function poolReady() { // untimed: the pool full again
  for (let i = 0; i < 2400; i++) {
    const p = await (await v1('GET', '/v1/pool')).json();
    if (p.pools[0].ready >= 1) return;
    await sleep(100);
  }
}
// A /v1 command's stream read to its exit record; the bytes of stdout.
// The command as E2B's SDK sends it (a login bash), so both ways run the
// same process in the guest.
async function v1Run(id, cmd) {
  const r = await v1('POST', `/v1/sandboxes/${id}/commands`, { argv: ['/bin/bash', '-l', '-c', cmd] });
  let bytes = 0, exit = null, rest = '';
  const dec = new TextDecoder();
  for await (const piece of r.body) {
    rest += dec.decode(piece, { stream: true });
    let nl;
    while ((nl = rest.indexOf('\n')) >= 0) {
      const o = JSON.parse(rest.slice(0, nl));
      rest = rest.slice(nl + 1);
      if (o.type === 'stdout') bytes += o.data !== undefined ? Buffer.byteLength(o.data) : Buffer.from(o.data_b64, 'base64').length;
      if (o.type === 'exit') exit = o.exit_code;
    }
  }
  return { bytes, exit };
}

async function e2bCreate() {
  const t0 = now();
  const s = await Sandbox.create('base');
  const r = await s.commands.run('true');
  const ms = now() - t0;
  if (r.exitCode !== 0) throw new Error('e2b: true failed');
  await s.kill();
  return ms;
}
async function v1Create() {
  const t0 = now();
  const sb = await (await v1('POST', '/v1/sandboxes', { image: 'python' })).json();
  const r = await v1Run(sb.id, 'true');
  const ms = now() - t0;
  if (r.exit !== 0 || sb.how !== 'pool') throw new Error(`v1: exit ${r.exit}, how ${sb.how}`);
  await v1('DELETE', `/v1/sandboxes/${sb.id}`);
  return ms;
}
for (let i = 0; i < Number(runs); i++) {
  const order = i % 2 ? [['v1', v1Create], ['e2b', e2bCreate]] : [['e2b', e2bCreate], ['v1', v1Create]];
  for (const [name, fn] of order) {
    await poolReady();
    console.log(`create-${name} ${(await fn()).toFixed(1)}`);
  }
}

// A stream of `mib` MiB of stdout (random bytes: base64 in both APIs'
// JSON), from one sandbox, three rounds each, taking turns.
const s = await Sandbox.create('base', { timeoutMs: 600_000 });
const n = Number(mib) * 1048576;
const cmd = `head -c ${n} /dev/urandom`;
for (let i = 0; i < 3; i++) {
  let t0 = now(), got = 0;
  await s.commands.run(cmd, { onStdout: () => {}, timeoutMs: 0 }).then((r) => { got = r.stdout.length; });
  let ms = now() - t0;
  console.log(`stream-e2b ${(n / 1048576 / (ms / 1000)).toFixed(1)} ${got > 0}`);
  t0 = now();
  const r = await v1Run(s.sandboxId, cmd);
  ms = now() - t0;
  console.log(`stream-v1 ${(r.bytes / 1048576 / (ms / 1000)).toFixed(1)} ${r.bytes === n}`);
}
await s.kill();
