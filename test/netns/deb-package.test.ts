// The Debian package (scripts/build-deb.sh), installed the way dpkg installs it, into a clean root:
// `dpkg --root=R --force-script-chrootless` unpacks it, registers the conffile and runs its maintainer
// scripts with DPKG_ROOT=R (no chroot, the host's running systemd is left alone). Then the installed
// `lvsd check-config` and `lvsd version` run from R, and `systemd-analyze verify --root=R` checks the
// installed unit against the installed /usr/bin/lvsd. Root: the postinst gives the config to the lvsd
// group, which only root may do. Not a network test; it sits in this layer because it needs root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireCommands, requireRoot } from '../support/prereq.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string>; devDependencies: Record<string, string> };

/** Runs fn and logs how long it took (a figure for the log; never asserted). */
function timed<T>(what: string, fn: () => T): T {
  const t0 = Date.now();
  try {
    return fn();
  } finally {
    console.log(`# ${what}: ${Date.now() - t0} ms`);
  }
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  assert.equal(r.status, 0, `${what} failed (${String(r.status)}):\n${r.stdout}${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

test('the .deb installs into a clean root: lvsd user, conffile, disabled unit that verifies, working lvsd', { timeout: 300_000 }, () => {
  requireRoot();
  requireCommands('dpkg', 'dpkg-deb', 'systemd-analyze', 'systemd-sysusers', 'npm');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-deb-'));
  const roots: string[] = [];
  try {
    // The package, from the build this test runs from (npm test builds dist/ and webui/dist first).
    const deb = timed('build-deb.sh', () => ok(spawnSync('bash', [path.join(ROOT, 'scripts/build-deb.sh'), '--no-build', '--out', work], { encoding: 'utf8', timeout: 240_000 }), 'build-deb.sh')).trim().split('\n').pop() ?? '';
    assert.equal(path.basename(deb), `lvsd_${pkg.version}_${execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim()}.deb`);

    const info = ok(spawnSync('dpkg-deb', ['--info', deb], { encoding: 'utf8' }), 'dpkg-deb --info');
    assert.match(info, /^ Package: lvsd$/m);
    assert.match(info, new RegExp(`^ Version: ${pkg.version.replace(/\./g, '\\.')}$`, 'm'));
    assert.match(info, /^ Depends: nodejs \(>= 20\.19\), systemd$/m);
    for (const script of ['postinst', 'prerm', 'postrm', 'conffiles']) assert.match(info, new RegExp(`^ +\\d+ bytes, +\\d+ lines +\\*? +${script}\\b`, 'm'), script);
    assert.equal(ok(spawnSync('dpkg-deb', ['--info', deb, 'conffiles'], { encoding: 'utf8' }), 'dpkg-deb --info conffiles').trim(), '/etc/lvsd/lvsd.yaml');

    const listing = ok(spawnSync('dpkg-deb', ['--contents', deb], { encoding: 'utf8' }), 'dpkg-deb --contents').trim().split('\n');
    assert.deepEqual(listing.filter((l) => !/^\S+ root\/root /.test(l)), [], 'every file is root-owned');
    const names = listing.map((l) => l.split(/\s+/)[5] ?? '');
    for (const f of ['./usr/lib/lvsd/dist/daemon/cli/main.js', './usr/lib/lvsd/build/Release/lvsd_net.node', './usr/lib/lvsd/build/Release/lvsd_probe.node', './usr/lib/lvsd/build/Release/lvsd_relay.node', './usr/lib/lvsd/build/Release/lvsd_ipvs.node', './usr/lib/lvsd/webui/dist/index.html', './usr/lib/lvsd/node_modules/fastify/package.json', './usr/lib/systemd/system/lvsd.service', './usr/lib/sysusers.d/lvsd.conf', './etc/lvsd/lvsd.yaml', './usr/share/doc/lvsd/copyright', './usr/share/doc/lvsd/install.md']) {
      assert.ok(names.includes(f), `the package holds ${f}`);
    }
    assert.ok(listing.some((l) => / \.\/usr\/bin\/lvsd -> \.\.\/lib\/lvsd\/dist\/daemon\/cli\/main\.js$/.test(l)), '/usr/bin/lvsd links to the program');
    const devOnly = Object.keys(pkg.devDependencies).filter((d) => names.includes(`./usr/lib/lvsd/node_modules/${d}/`));
    assert.deepEqual(devOnly, [], 'no development dependencies');
    assert.deepEqual(names.filter((n) => /\/(dist\/test|test)\//.test(n) && !n.includes('/node_modules/')), [], 'no tests');

    // A clean root: an empty dpkg database and systemd's own units (systemd-analyze verify needs the targets).
    // On tmpfs when there is one: dpkg creates ~3,700 files, 2 s there against 10-20 s on this disk under load.
    const R = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'lvsd-deb-root-'));
    roots.push(R);
    for (const d of ['var/lib/dpkg/info', 'var/lib/dpkg/updates', 'var/lib/dpkg/triggers', 'usr/lib/systemd']) fs.mkdirSync(path.join(R, d), { recursive: true });
    fs.writeFileSync(path.join(R, 'var/lib/dpkg/status'), '');
    fs.cpSync('/usr/lib/systemd/system', path.join(R, 'usr/lib/systemd/system'), { recursive: true, verbatimSymlinks: true });
    // Any call of systemctl by the maintainer scripts is recorded (there must be none into another root).
    const bin = path.join(work, 'bin');
    fs.mkdirSync(bin);
    const calls = path.join(work, 'systemctl.calls');
    fs.writeFileSync(path.join(bin, 'systemctl'), `#!/bin/sh\necho "$*" >> '${calls}'\n`, { mode: 0o755 });
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` };
    // nodejs and systemd are not in R's (empty) database: --force-depends for those two, nothing else.
    const dpkg = (...args: string[]): string => timed(`dpkg ${args[0] ?? ''}`, () => ok(spawnSync('dpkg', [`--root=${R}`, '--force-script-chrootless', '--force-not-root', '--force-depends', '--force-unsafe-io', '--log=/dev/null', ...args], { encoding: 'utf8', env, timeout: 120_000 }), `dpkg ${args.join(' ')}`));

    const installOut = dpkg('-i', deb);
    assert.match(installOut, /lvsd: installed, not enabled\. Write \/etc\/lvsd\/lvsd\.yaml/);
    assert.match(ok(spawnSync('dpkg', [`--root=${R}`, '-s', 'lvsd'], { encoding: 'utf8' }), 'dpkg -s'), /^Status: install ok installed$/m);

    // The postinst made the user and group, and gave the config to the group, readable by nobody else.
    const passwd = fs.readFileSync(path.join(R, 'etc/passwd'), 'utf8');
    assert.match(passwd, /^lvsd:x:\d+:\d+:[^:]*:\/var\/lib\/lvsd:\/usr\/sbin\/nologin$/m);
    const gid = Number(/^lvsd:x:(\d+):/m.exec(fs.readFileSync(path.join(R, 'etc/group'), 'utf8'))?.[1]);
    const conf = path.join(R, 'etc/lvsd/lvsd.yaml');
    const st = fs.statSync(conf);
    assert.deepEqual([st.uid, st.gid, st.mode & 0o777], [0, gid, 0o640]);

    // Not started, not enabled.
    assert.equal(fs.existsSync(calls), false, `systemctl was called: ${fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8') : ''}`);
    assert.equal(fs.existsSync(path.join(R, 'etc/systemd/system/multi-user.target.wants/lvsd.service')), false);

    // The conffile is the shipped example, every line a comment: nothing to run.
    const text = fs.readFileSync(conf, 'utf8');
    assert.deepEqual(text.split('\n').filter((l) => l !== '' && !l.startsWith('#')), [], 'every line is a comment');
    const example = fs.readFileSync(path.join(ROOT, 'config/lvsd.yaml'), 'utf8');
    assert.ok(text.includes(example.trimEnd().split('\n').map((l) => (l === '' ? '#' : `# ${l}`)).join('\n')), 'it holds config/lvsd.yaml, commented');

    // The installed program runs from R with its own node_modules and addons.
    const lvsd = path.join(R, 'usr/bin/lvsd');
    // As installed it configures nothing, so check-config refuses it — and with it the unit's ExecStartPre: an
    // lvsd started by mistake before the file is written does not come up empty.
    const unconfigured = spawnSync(lvsd, ['check-config', conf], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(unconfigured.status, 1, `${unconfigured.stdout}${unconfigured.stderr}`);
    assert.match(`${unconfigured.stdout}${unconfigured.stderr}`, /lvsd\.yaml:1:1: the file is empty \(no settings at all\)/);
    assert.match(ok(spawnSync(lvsd, ['version'], { encoding: 'utf8', timeout: 60_000 }), 'lvsd version'), new RegExp(`^lvsd ${pkg.version.replace(/\./g, '\\.')} `));
    // Every production dependency loads from the installed tree, and so does the whole daemon (the files
    // build-deb.sh strips from node_modules must be ones nothing loads).
    const probe = path.join(R, 'usr/lib/lvsd/load-check.mjs');
    fs.writeFileSync(probe, [
      `for (const d of ${JSON.stringify(Object.keys(pkg.dependencies))}) await import(d);`,
      // The command table imports the whole daemon (lvsd run's composition root: director, API, dataplanes).
      "await import('./dist/daemon/cli/commands.js');",
      "console.log('loaded');",
    ].join('\n'));
    assert.equal(ok(spawnSync(process.execPath, [probe], { encoding: 'utf8', timeout: 60_000 }), 'loading the installed modules').trim(), 'loaded');
    fs.rmSync(probe);
    // The example itself, uncommented, is a valid config for the installed lvsd.
    const uncommented = path.join(work, 'example.yaml');
    fs.writeFileSync(uncommented, example);
    assert.match(ok(spawnSync(lvsd, ['check-config', uncommented], { encoding: 'utf8', timeout: 60_000 }), 'lvsd check-config example'), /: ok \(\d+ VRRP instances?, [1-9]\d* virtual servers?/);

    // The installed unit names the installed program, and systemd's verifier accepts it in R, without a warning.
    const unit = fs.readFileSync(path.join(R, 'usr/lib/systemd/system/lvsd.service'), 'utf8');
    assert.match(unit, /^ExecStart=\/usr\/bin\/lvsd run --config \/etc\/lvsd\/lvsd\.yaml$/m);
    assert.doesNotMatch(unit, /\/usr\/local/);
    const verify = spawnSync('systemd-analyze', ['verify', `--root=${R}`, 'lvsd.service'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(`${verify.stdout}${verify.stderr}`.trim(), '');
    assert.equal(verify.status, 0);
    // …and the verifier can fail: without the program it says so.
    fs.renameSync(lvsd, `${lvsd}.away`);
    const broken = spawnSync('systemd-analyze', ['verify', `--root=${R}`, 'lvsd.service'], { encoding: 'utf8', timeout: 60_000 });
    fs.renameSync(`${lvsd}.away`, lvsd);
    assert.match(`${broken.stdout}${broken.stderr}`, /Command \/usr\/bin\/lvsd is not executable/);

    // An upgrade (here: the same package again) keeps the operator's edits of the conffile and its group.
    fs.appendFileSync(conf, 'node: { name: director-7 }\n');
    dpkg('-i', deb);
    assert.match(fs.readFileSync(conf, 'utf8'), /^node: \{ name: director-7 \}$/m);
    assert.equal(fs.statSync(conf).gid, gid);
    assert.equal(fs.existsSync(calls), false, 'no systemctl call into another root on upgrade either');

    // Remove keeps the conffile and the operator state; purge takes both.
    fs.mkdirSync(path.join(R, 'var/lib/lvsd'), { recursive: true });
    fs.writeFileSync(path.join(R, 'var/lib/lvsd/state.json'), '{}');
    dpkg('-r', 'lvsd');
    assert.equal(fs.existsSync(path.join(R, 'usr/lib/lvsd')), false);
    assert.equal(fs.existsSync(lvsd), false);
    assert.equal(fs.existsSync(conf), true);
    assert.equal(fs.existsSync(path.join(R, 'var/lib/lvsd/state.json')), true);
    dpkg('--purge', 'lvsd');
    assert.equal(fs.existsSync(path.join(R, 'etc/lvsd')), false);
    assert.equal(fs.existsSync(path.join(R, 'var/lib/lvsd')), false);
  } finally {
    for (const d of [work, ...roots]) fs.rmSync(d, { recursive: true, force: true });
  }
});
