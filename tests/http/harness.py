#!/usr/bin/env python3
"""Runs remote-scene checks against a real web server: Debian's nginx on 127.0.0.1, on an
ephemeral port, with a configuration written here into a temporary directory (never the
system's), plus the fault-injecting proxy of fault_proxy.py in front of it.

    harness.py [--corpus DIR] [--tls] [--access-log] run -- CMD ARGS...
                                                     runs CMD with {base}, {proxy}, {root}
                                                     replaced (also in the environment as
                                                     FOURDGS_HTTP_BASE / _PROXY / _ROOT; the
                                                     corpus again under /private/, only with
                                                     the header X-Fourdgs-Token:
                                                     $FOURDGS_HTTP_TOKEN; with --tls the root
                                                     over https too: FOURDGS_HTTPS_BASE, its CA
                                                     FOURDGS_HTTPS_CA and an unrelated
                                                     FOURDGS_HTTPS_WRONG_CA)
    harness.py --corpus DIR conformance RUNNER       every corpus file over HTTP, both paths,
                                                     against its committed expectation
    harness.py --corpus DIR cli TOOL                 4dgs commands on URLs = on local paths

The document root is a temporary directory (writable: tests add and replace files in it) with
DIR linked in as /corpus. nginx is stopped at the end whatever happens, and is told to die with
this process (PR_SET_PDEATHSIG) should the harness itself be killed. Exit status: the command's
(run), 0/1 (conformance, cli), 77 when nginx is not installed (ctest SKIP_RETURN_CODE).
"""

import argparse
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fault_proxy  # noqa: E402

SKIP = 77


def find_nginx():
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    # Linux: the child gets SIGTERM when the harness dies, so no daemon outlives a killed test.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def stop_process(proc):
    """Stops a server this process started, by its process id: SIGTERM, then SIGKILL after
    10 s. Also used by the viewer's tests for their Xvfb."""
    if proc and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


CONFIG = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
{user}
events {{ worker_connections 256; }}
http {{
    {access_log}
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    default_type application/octet-stream;
    # The web player's files (tests/web): browsers load module scripts and wasm by type.
    types {{ text/html html; text/css css; text/javascript js mjs cjs; application/wasm wasm;
             image/png png; application/json json; }}
    sendfile on;
    keepalive_timeout 60;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{port};
        root {tmp}/root;
        location / {{
            # What docs/remote.md recommends for web players.
            add_header Access-Control-Allow-Origin * always;
            add_header Access-Control-Expose-Headers "Content-Range, ETag, Content-Length, Accept-Ranges" always;
        }}
        # A private copy of the corpus: only requests that carry the token header get it.
        location /private/ {{
            alias {tmp}/root/corpus/;
            if ($http_x_fourdgs_token != "{token}") {{ return 403; }}
        }}
    }}
{tls_server}}}
"""

# With --tls: the same root over https on a second port, with a certificate for 127.0.0.1 signed
# by a certificate authority made here (FOURDGS_HTTPS_CA); FOURDGS_HTTPS_WRONG_CA is another
# authority, which did not sign it.
TLS_SERVER = """    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {tmp}/tls/server.pem;
        ssl_certificate_key {tmp}/tls/server.key;
        root {tmp}/root;
    }}
"""
TOKEN = "fourdgs-test-token"


def make_certificates(folder):
    """A CA, a server certificate for 127.0.0.1 it signs, and an unrelated CA (openssl)."""
    os.mkdir(folder)

    def ssl(*args):
        subprocess.run(["openssl"] + list(args), cwd=folder, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for ca in ("ca", "wrong-ca"):
        ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=fourdgs test " + ca, "-keyout", ca + ".key", "-out", ca + ".pem")
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
        "server.key", "-out", "server.csr")
    with open(os.path.join(folder, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    ssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.pem")


# With --access-log: one line per request (the URI, the status, the body bytes sent and the Range
# asked), in {root}/../access.log, named to the command as FOURDGS_HTTP_ACCESS_LOG, so a test can
# count what a client fetched as the server saw it.
ACCESS_LOG = """log_format fourdgs '$request_method $uri $status $body_bytes_sent "$http_range"';
    access_log {tmp}/access.log fourdgs;"""


class Nginx:
    def __init__(self, nginx, tmp, tls=False, access_log=False):
        self.nginx, self.tmp, self.proc, self.port = nginx, tmp, None, None
        self.tls, self.tls_port = tls, None
        self.access_log = access_log

    def start(self):
        for _ in range(5):  # the port is free when chosen; retry should another process take it
            self.port = free_port()
            self.tls_port = free_port() if self.tls else None
            tls_server = TLS_SERVER.format(tmp=self.tmp, port=self.tls_port) if self.tls else ""
            conf = os.path.join(self.tmp, "nginx.conf")
            with open(conf, "w") as f:
                f.write(CONFIG.format(tmp=self.tmp, port=self.port, token=TOKEN,
                                      tls_server=tls_server,
                                      user="user root;" if os.geteuid() == 0 else "",
                                      access_log=ACCESS_LOG.format(tmp=self.tmp)
                                      if self.access_log else "access_log off;"))
            self.proc = subprocess.Popen(
                [self.nginx, "-p", self.tmp + "/", "-c", conf, "-e", self.tmp + "/error.log"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
            deadline = time.time() + 10
            while time.time() < deadline and self.proc.poll() is None:
                try:
                    for port in (self.port, self.tls_port) if self.tls else (self.port,):
                        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    return
                except OSError:
                    time.sleep(0.05)
            self.stop()
        log = os.path.join(self.tmp, "error.log")
        raise RuntimeError("nginx did not start: " +
                           (open(log).read() if os.path.exists(log) else "no log"))

    def stop(self):
        stop_process(self.proc)
        self.proc = None


def child_env(base, proxy, root, extra=None):
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    env.update(FOURDGS_HTTP_BASE=base, FOURDGS_HTTP_PROXY=proxy, FOURDGS_HTTP_ROOT=root,
               FOURDGS_HTTP_TOKEN=TOKEN, **(extra or {}))
    return env


def run_command(argv, base, proxy, root, env):
    argv = [a.replace("{base}", base).replace("{proxy}", proxy).replace("{root}", root)
            for a in argv]
    return subprocess.call(argv, env=env, timeout=600)


def conformance(runner, corpus, base, env):
    failures, checked = [], 0
    for kind in ("valid", "refusals"):
        folder = os.path.join(corpus, kind)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".4dgs"):
                continue
            expected = os.path.join(folder, name[:-5] + ".expected.json")
            url = "%s/corpus/%s/%s" % (base, kind, name)
            for path in ("streamed", "indexed"):
                checked += 1
                p = subprocess.run([runner, url, "--path", path, "--expect", expected],
                                   env=env, capture_output=True, text=True, timeout=120)
                if p.returncode != 0:
                    failures.append("%s/%s (%s): exit %d %s" % (kind, name, path, p.returncode,
                                                                p.stderr.strip()))
    for f in failures:
        print("FAILED", f)
    print("conformance over HTTP: %d checks, %d failed" % (checked, len(failures)))
    return 1 if failures else 0


def cli(tool, corpus, base, env, tmp):
    failures = []

    def run(args):
        return subprocess.run([tool] + args, env=env, capture_output=True, timeout=120)

    def same(what, args_of, outputs=()):
        """Runs the command on the URL and on the local path; stdout, exit status and the
        named output files must be identical (the URL spelled as the path)."""
        got = {}
        for where in ("url", "path"):
            result = run(args_of(where))
            files = [open(o % where, "rb").read() if os.path.exists(o % where) else None
                     for o in outputs]
            got[where] = (result.returncode,
                          result.stdout.replace(args_of("url")[1].encode(), b"FILE")
                          .replace(args_of("path")[1].encode(), b"FILE"), files)
        if got["url"] != got["path"]:
            failures.append("%s: URL and path differ: %r vs %r" % (what, got["url"][:2],
                                                                  got["path"][:2]))
        elif got["url"][0] not in (0, 2):
            failures.append("%s: exit %d" % (what, got["url"][0]))
        elif any(f is None for f in got["url"][2]):
            failures.append("%s: no output file" % what)

    for name, at in (("many-chunks.4dgs", "1.3"), ("kd-chained.4dgs", "0.5"),
                     ("extras-camera.4dgs", "0.5")):
        loc = {"url": "%s/corpus/valid/%s" % (base, name),
               "path": os.path.join(corpus, "valid", name)}
        ply = os.path.join(tmp, name + ".%s.ply")
        png = os.path.join(tmp, name + ".%s.png")
        same(name + " extract", lambda w: ["extract", loc[w], "--at", at, "-o", ply % w], [ply])
        same(name + " info", lambda w: ["info", loc[w]])
        same(name + " validate", lambda w: ["validate", loc[w], "--json"])
        same(name + " dump --index", lambda w: ["dump", loc[w], "--index", "--json"])
        same(name + " dump --records", lambda w: ["dump", loc[w], "--records", "--json"])
        same(name + " dump --gaussians", lambda w: ["dump", loc[w], "--gaussians", "--json"])
        same(name + " preview", lambda w: ["preview", loc[w], "--at", at, "-o", png % w,
                                           "--width", "64", "--height", "48"], [png])
    # Private servers: --header on every request; https with --ca-bundle (harness --tls).
    private = base + "/private/valid/many-chunks.4dgs"
    header = ["--header", "X-Fourdgs-Token: " + TOKEN]
    for args, code, refusal in (
            (["info", private], 3, b"http-status"),
            (header + ["--header", "X-Other: 1", "info", private], 0, None),
            (["--ca-bundle", env.get("FOURDGS_HTTPS_CA", ""), "--retries", "2", "--timeout", "30",
              "info", env.get("FOURDGS_HTTPS_BASE", "") + "/corpus/valid/many-chunks.4dgs"], 0,
             None),
            (["--ca-bundle", env.get("FOURDGS_HTTPS_WRONG_CA", ""), "validate",
              env.get("FOURDGS_HTTPS_BASE", "") + "/corpus/valid/many-chunks.4dgs"], 3,
             b"tls-verification-failed")):
        if "--ca-bundle" in args and "FOURDGS_HTTPS_BASE" not in env:
            continue  # without --tls
        result = run(args)
        if result.returncode != code or (refusal and refusal not in result.stderr):
            failures.append("4dgs %s: exit %d, stderr %r (wanted %d%s)" % (
                " ".join(args), result.returncode, result.stderr[-300:], code,
                " and " + refusal.decode() if refusal else ""))
    missing = run(["info", base + "/corpus/valid/no-such-file.4dgs"])
    if missing.returncode != 3 or b"http-status" not in missing.stderr:
        failures.append("a missing URL: exit %d, stderr %r (wanted 3 and http-status)"
                        % (missing.returncode, missing.stderr))
    for f in failures:
        print("FAILED", f)
    print("4dgs over HTTP: %d failed" % len(failures))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", help="linked into the document root as /corpus")
    ap.add_argument("--tls", action="store_true",
                    help="also serve the root over https (FOURDGS_HTTPS_BASE, _CA, _WRONG_CA)")
    ap.add_argument("--access-log", action="store_true",
                    help="log every request to FOURDGS_HTTP_ACCESS_LOG")
    ap.add_argument("mode", choices=("run", "conformance", "cli"))
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args

    nginx = find_nginx()
    if nginx is None:
        print("SKIP: nginx is not installed (Debian: apt-get install nginx)")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="fourdgs-http-")
    server = Nginx(nginx, tmp, tls=a.tls, access_log=a.access_log)
    if a.access_log:
        os.environ["FOURDGS_HTTP_ACCESS_LOG"] = os.path.join(tmp, "access.log")
    proxy = None
    try:
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        if a.corpus:
            os.symlink(os.path.abspath(a.corpus), os.path.join(root, "corpus"))
        if a.tls:
            make_certificates(os.path.join(tmp, "tls"))
        server.start()
        proxy = fault_proxy.start(server.port)
        base = "http://127.0.0.1:%d" % server.port
        proxy_base = "http://127.0.0.1:%d" % proxy.server_address[1]
        tls = {}
        if a.tls:
            tls = dict(FOURDGS_HTTPS_BASE="https://127.0.0.1:%d" % server.tls_port,
                       FOURDGS_HTTPS_CA=os.path.join(tmp, "tls", "ca.pem"),
                       FOURDGS_HTTPS_WRONG_CA=os.path.join(tmp, "tls", "wrong-ca.pem"))
        env = child_env(base, proxy_base, root, tls)
        if a.mode == "run":
            return run_command(args, base, proxy_base, root, env)
        if a.mode == "conformance":
            return conformance(args[0], a.corpus, base, env)
        return cli(args[0], a.corpus, base, env, tmp)
    finally:
        if proxy is not None:
            proxy.shutdown()
            proxy.server_close()
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
