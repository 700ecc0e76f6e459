// tests/boot/linux-e2b's client: E2B's own JS SDK (npm `e2b`), unmodified,
// against airlock serve's E2B layer.  Each step prints one line
// "NAME value..." that the shell test asserts on; a step that throws
// prints "NAME error <class> <message>" and the run goes on.
//   node e2b-client.mjs SDK_DIR SOCKET
const [sdk, sock] = process.argv.slice(2);
const { Sandbox, CommandExitError, NotFoundError } = await import(`${sdk}/node_modules/e2b/dist/index.mjs`);
const { createHash, randomBytes } = await import('node:crypto');
const { execFileSync } = await import('node:child_process');

const out = (...a) => console.log(a.map(String).join(' '));
async function step(name, fn) {
  try { await fn(); } catch (e) { out(name, 'error', e?.constructor?.name, String(e?.message).split('\n')[0].slice(0, 300)); }
}
const v1 = (path) => JSON.parse(execFileSync('curl', ['-s', '--unix-socket', sock, `http://airlock${path}`]).toString());
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let sb;
await step('create', async () => {
  sb = await Sandbox.create('base', { metadata: { suite: 'linux-e2b' }, timeoutMs: 120_000 });
  out('create', sb.sandboxId.length, v1(`/v1/sandboxes/${sb.sandboxId}`).how);
});
await step('run', async () => {
  const r = await sb.commands.run('echo hi; id -un; pwd; echo err >&2');
  out('run', r.exitCode, JSON.stringify(r.stdout), JSON.stringify(r.stderr));
});
await step('exit', async () => {
  try { await sb.commands.run('exit 3'); out('exit', 'no error'); }
  catch (e) { out('exit', e instanceof CommandExitError, e.exitCode); }
});
await step('background', async () => {
  const h = await sb.commands.run('sleep 100', { background: true });
  const listed = (await sb.commands.list()).some((p) => p.pid === h.pid);
  const killed = await sb.commands.kill(h.pid);
  let ended = 'no';
  try { await h.wait(); } catch (e) { ended = `${e.constructor.name} ${e.exitCode}`; }
  const after = (await sb.commands.list()).some((p) => p.pid === h.pid);
  out('background', h.pid > 1, listed, killed, ended, after);
});
await step('stdin', async () => {
  const h = await sb.commands.run('cat', { background: true, stdin: true });
  await sb.commands.sendStdin(h.pid, 'through stdin\n');
  await sb.commands.closeStdin(h.pid);
  const r = await h.wait();
  out('stdin', r.exitCode, JSON.stringify(r.stdout));
});
await step('files', async () => {
  const blob = randomBytes(10 * 1024 * 1024);
  const want = createHash('sha256').update(blob).digest('hex');
  await sb.files.write('/home/user/blob.bin', blob);
  const inGuest = (await sb.commands.run('sha256sum /home/user/blob.bin')).stdout.split(' ')[0];
  const back = Buffer.from(await sb.files.read('/home/user/blob.bin', { format: 'bytes' }));
  out('files', inGuest === want, createHash('sha256').update(back).digest('hex') === want, back.length);
  await sb.files.write('notes/a.txt', 'text here');
  const names = (await sb.files.list('notes')).map((e) => e.name).join(',');
  out('files-text', await sb.files.read('notes/a.txt'), names);
});
await step('watch', async () => {
  await sb.files.makeDir('/home/user/w');
  const seen = [];
  const w = await sb.files.watchDir('/home/user/w', (e) => seen.push(`${e.type}:${e.name}`));
  await sb.commands.run('for i in 1 2 3; do echo $i > /home/user/w/f$i; done');
  for (let i = 0; i < 50 && seen.filter((s) => s.startsWith('create')).length < 3; i++) await sleep(200);
  await w.stop();
  out('watch', seen.filter((s) => s.startsWith('create')).length);
});
await step('connect', async () => {
  const again = await Sandbox.connect(sb.sandboxId);
  const r = await again.commands.run('cat /home/user/notes/a.txt');
  out('connect', r.stdout);
});
await step('timeout', async () => {
  await sb.setTimeout(60_000);
  const info = await sb.getInfo();
  const left = (info.endAt.getTime() - Date.now()) / 1000;
  out('timeout', left > 45 && left <= 61, info.state, info.metadata.suite);
});
await step('list', async () => {
  const items = await Sandbox.list({ query: { metadata: { suite: 'linux-e2b' } } }).nextItems();
  out('list', items.map((s) => s.sandboxId).includes(sb.sandboxId), items.length);
});
await step('kill', async () => {
  await sb.kill();
  const running = await sb.isRunning();
  let gone = 'no error';
  try { await Sandbox.connect(sb.sandboxId); } catch (e) { gone = e.constructor.name; }
  out('kill', running, gone);
});
await step('token', async () => {
  // Knowing a sandbox's id is not enough: envd calls without its access
  // token are refused.
  const s2 = await Sandbox.create('base', { timeoutMs: 60_000 });
  const port = new URL(process.env.E2B_SANDBOX_URL).port;
  const code = execFileSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST',
    '-H', `E2b-Sandbox-Id: ${s2.sandboxId}`, '-H', 'Content-Type: application/json', '-d', '{}',
    `http://127.0.0.1:${port}/process.Process/List`]).toString();
  out('token', code);
  await s2.kill();
});
await step('eight', async () => {
  const t0 = Date.now();
  const all = await Promise.all([...Array(8).keys()].map(async (i) => {
    const s = await Sandbox.create('base', { timeoutMs: 120_000 });
    const r = await s.commands.run(`echo ${i}`);
    await s.kill();
    return r.stdout.trim();
  }));
  out('eight', all.join(','), Math.round((Date.now() - t0) / 1000));
});
