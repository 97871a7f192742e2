#!/usr/bin/env bats
# Real workloads through `sbx-oci python` at its defaults, as a user would run them
# (issue 21): each is ordinary code an agent writes, and each must work in the sandbox
# as it does bare. The result JSON is checked where the run leaves something behind.

load helpers
load helpers/sandbox

setup() {
	requires root userns python-stack
	setup_state
	SERVE_PID=
	RL_DIR=
	WORK=$BATS_TEST_TMPDIR/work
	mkdir "$WORK"
	chown "$HOST_ID:$HOST_ID" "$WORK" # the sandbox user's own directory: bound as is
}

teardown() {
	local rc=0
	serve_stop || rc=1
	helpers_teardown || rc=1
	[ -z "$RL_DIR" ] || rm -rf "$RL_DIR"
	return $rc
}

@test "workloads: pandas CSV written and read back in the workdir, and a group-by" {
	py --workdir "$WORK" -c '
import numpy as np, pandas as pd
df = pd.DataFrame({"k": np.arange(10000) % 7, "v": np.arange(10000, dtype=float)})
df.to_csv("/work/data.csv", index=False)
back = pd.read_csv("/work/data.csv")
g = back.groupby("k")["v"].agg(["count", "sum"])
print(len(back), int(g["count"].sum()), int(g.loc[3, "sum"]))
'
	expect_status 0
	expect_stdout "10000 10000 $(python3 -c 'print(sum(i for i in range(10000) if i % 7 == 3))')"
	[ "$(head -1 "$WORK/data.csv")" = k,v ]
	result_is '[.files[] | select(.path == "data.csv" and .change == "created")] | length == 1'
}

@test "workloads: numpy linear algebra (solve, eigenvalues, SVD) at the default thread count" {
	py -c '
import numpy as np
rng = np.random.default_rng(1)
a = rng.standard_normal((300, 300)); b = rng.standard_normal(300)
x = np.linalg.solve(a, b)
s = np.linalg.svd(a, compute_uv=False)
w = np.linalg.eigvalsh(a @ a.T)
print(bool(np.allclose(a @ x, b)), bool(abs(s[0] ** 2 - w[-1]) < 1e-6 * w[-1]))
'
	expect_status 0
	expect_stdout "True True"
}

@test "workloads: matplotlib (Agg) saves a PNG into the workdir, and the result lists it" {
	py --workdir "$WORK" -c '
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([0, 1, 2], [0, 1, 4])
fig.savefig("/work/plot.png")
print("saved")
'
	expect_status 0
	expect_stdout saved
	[ "$(head -c 8 "$WORK/plot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] # the PNG signature
	result_is '[.files[] | select(.path == "plot.png" and .change == "created" and .size > 1000)] | length == 1'
}

@test "workloads: sqlite3 database in the workdir (WAL), reopened by the host" {
	py --workdir "$WORK" -c '
import sqlite3
db = sqlite3.connect("/work/app.db")
db.execute("pragma journal_mode=wal")
db.execute("create table t (n integer)")
db.executemany("insert into t values (?)", [(i,) for i in range(1000)])
db.commit()
print(db.execute("select sum(n) from t").fetchone()[0])
db.close()
'
	expect_status 0
	expect_stdout 499500
	[ "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from t").fetchone()[0])' "$WORK/app.db")" = 1000 ]
}

@test "workloads: ssl default context with the system CA store, and a TLS handshake over loopback" {
	py -c '
import ssl, socket, threading, subprocess, os
ctx = ssl.create_default_context()
print("cas", ctx.cert_store_stats()["x509_ca"] > 0)
# a self-signed server on 127.0.0.1 inside the sandbox (made with openssl if present)
os.chdir("/tmp")
r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "k.pem",
                    "-out", "c.pem", "-days", "1", "-subj", "/CN=localhost"], capture_output=True)
if r.returncode != 0:
    print("handshake skipped"); raise SystemExit(0)
srv = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); srv.load_cert_chain("c.pem", "k.pem")
ls = socket.create_server(("127.0.0.1", 0)); port = ls.getsockname()[1]
def serve():
    c, _ = ls.accept()
    with srv.wrap_socket(c, server_side=True) as s: s.sendall(b"tls-ok")
threading.Thread(target=serve, daemon=True).start()
cli = ssl.create_default_context(cafile="c.pem")
with cli.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost") as s:
    print(s.version(), s.recv(16).decode())
'
	expect_status 0
	has "$stdout" "cas True"
	command -v openssl >/dev/null || skip "openssl(1) is not installed"
	has "$stdout" "tls-ok"
}

@test "workloads: tar, gzip and zip archives made by subprocess (GNU tar, gzip) and by the zipfile module" {
	py --workdir "$WORK" -c '
import os, subprocess, zipfile
os.chdir("/work")
os.makedirs("d/sub")
for i in range(5):
    open(f"d/sub/f{i}.txt", "w").write("line\n" * 1000)
subprocess.run(["tar", "-czf", "d.tgz", "d"], check=True)
subprocess.run(["tar", "-cf", "d.tar", "d"], check=True)
subprocess.run(["gzip", "-k", "d.tar"], check=True)
with zipfile.ZipFile("d.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for root, _, names in os.walk("d"):
        for n in names:
            z.write(os.path.join(root, n))
listing = subprocess.run(["tar", "-tzf", "d.tgz"], check=True, capture_output=True, text=True).stdout.split()
print(len([l for l in listing if l.endswith(".txt")]), len(zipfile.ZipFile("d.zip").namelist()))
'
	expect_status 0
	expect_stdout "5 5"
	tar -tzf "$WORK/d.tgz" | grep -q '^d/sub/f4.txt$'
	gzip -t "$WORK/d.tar.gz"
	[ "$(/usr/bin/python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print(len(z.namelist()))' "$WORK/d.zip")" = 5 ]
	result_is '[.files[] | select(.path == "d.tgz" or .path == "d.tar.gz" or .path == "d.zip")] | length == 3'
}

@test "workloads: multiprocessing.Pool() and ThreadPoolExecutor() at their default sizes" {
	py -c '
import os, multiprocessing, concurrent.futures
def sq(x): return x * x
with multiprocessing.Pool() as p:
    a = sum(p.map(sq, range(1000)))
with concurrent.futures.ThreadPoolExecutor() as ex:
    b = sum(ex.map(sq, range(1000)))
with concurrent.futures.ProcessPoolExecutor() as ex:
    c = sum(ex.map(sq, range(100)))
print(a, b, c, os.cpu_count() >= 1)
'
	expect_status 0
	expect_stdout "332833500 332833500 328350 True"
	result_is '.limits_hit == []'
}

@test "workloads (rootless): pandas CSV in the workdir and a default Pool, as an unprivileged user" {
	rootless_setup
	rl_py --allow-degraded --workdir "$RL_DIR/work" -c '
import multiprocessing, pandas as pd
pd.DataFrame({"a": range(100)}).to_csv("/work/r.csv", index=False)
with multiprocessing.Pool() as p:
    print(sum(p.map(abs, range(-50, 50))), len(pd.read_csv("/work/r.csv")))
'
	expect_status 0
	expect_stdout "2500 100"
	[ -s "$RL_DIR/work/r.csv" ]
}
