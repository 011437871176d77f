#!/usr/bin/env python3
"""Interleaved comparison for bench/compare.sh (stdlib only).

    interleave.py run --work DIR --harness DIR --label quiet|busy --rounds N --ops "R W"
                      --system NAME=URL=PID ... [--pgbench-clients "8 32"]
    interleave.py report RESULTS_JSONL RUN_ID [RUN_ID ...]

`run` measures, in every round and for every op, the pgbench 2-statement pipeline ceiling
(pg/read_pipe.sql or write_pipe.sql, -M prepared, each client count; the best one is the round's
ceiling), then every system in the order given (e.g. peer, before, after), with the harness's wrk
scripts and settings. CPU is read from /proc per process, not per command name, so that other
PostgreSQL clusters and Swift builds on the same machine are not counted as ours: "db" is the
bench cluster's postmaster and all its children, "srv" the server process (all threads), "gen"
wrk or pgbench; "other" is everything else the machine did in the window (busy − db − srv − gen).
Rows go to DIR/compare.jsonl.

`report` prints, per run, the median of the rounds and the spread ((max − min) / median) of
req/s, the ratios to the same round's ceiling and peer, and CPU µs per request.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

TCK = os.sysconf("SC_CLK_TCK")


def proc_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return 0
    fields = s[s.rfind(")") + 2:].split()
    # utime + stime of the process (all its threads) + cutime + cstime of waited-for children
    return int(fields[11]) + int(fields[12])


def children(pid):
    out = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            out = [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def machine_ticks():
    with open("/proc/stat") as f:
        vals = [int(v) for v in f.readline().split()[1:9]]
    return sum(vals), vals[3] + vals[4]


def postmaster_pid(work):
    with open(os.path.join(work, "pg", "data", "postmaster.pid")) as f:
        return int(f.readline())


class Sampler:
    """CPU of named process groups between start() and stop(). A group is a function returning
    pids; pids that appear during the window count from 0 (new backends), pids that vanish keep
    their last reading."""

    def __init__(self, groups):
        self.groups = groups
        self.last = {}

    def read(self):
        now = {}
        for name, fn in self.groups.items():
            for pid in fn():
                now[(name, pid)] = proc_ticks(pid)
        return now

    def start(self):
        self.t0 = time.monotonic()
        self.p0 = self.read()
        self.m0 = machine_ticks()

    def stop(self):
        t1 = time.monotonic()
        p1 = self.read()
        m1 = machine_ticks()
        secs = t1 - self.t0
        used = {name: 0 for name in self.groups}
        for key, ticks in p1.items():
            used[key[0]] += max(0, ticks - self.p0.get(key, 0))
        pct = {name: 100.0 * t / TCK / secs for name, t in used.items()}
        all_t, idle_t = m1[0] - self.m0[0], m1[1] - self.m0[1]
        busy = 100.0 * (1 - idle_t / max(1, all_t)) * os.cpu_count()
        pct["other"] = max(0.0, busy - sum(pct.values()))
        pct["busy"] = busy
        return {k: round(v, 1) for k, v in pct.items()}, secs


def sample_during(proc, groups, delay, window):
    """Runs the sampler over [delay, delay + window] of proc's life, in a thread."""
    result = {}

    def body():
        time.sleep(delay)
        s = Sampler(groups)
        s.start()
        time.sleep(window)
        if proc.poll() is None:
            result["cpu"], result["window_s"] = s.stop()

    t = threading.Thread(target=body)
    t.start()
    return t, result


def psql(args, sql):
    subprocess.run([os.path.join(args["pg_bin"], "psql"), "-X", "-q", "-h", args["sock"], "-p", "54329", "-U", "postgres",
                    "-d", "bench", "-c", sql], check=True, stdout=subprocess.DEVNULL)


def checkpoint(args):
    psql(args, "VACUUM (ANALYZE) public.user_profiles")
    psql(args, "CHECKPOINT")


def run_pgbench(args, op, clients):
    script = os.path.join(args["harness"], "pg", "read_pipe.sql")
    if op == "W":
        script = args["w_pgbench"]
    if op == "W":
        checkpoint(args)
    cmd = [os.path.join(args["pg_bin"], "pgbench"), "-n", "-h", args["sock"], "-p", "54329", "-U", "authenticator",
           "-M", "prepared", "-c", str(clients), "-j", "2", "-T", str(args["pgb_duration"]), "-D",
           f"nusers={args['n_users']}", "-f", script, "bench"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    pm = args["postmaster"]
    d = args["pgb_duration"]
    t, res = sample_during(proc, {"db": lambda: [pm] + children(pm), "gen": lambda: [proc.pid]}, 3, max(4, d - 6))
    out = proc.communicate()[0]
    t.join()
    m = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out)
    lat = re.search(r"latency average = ([0-9.]+) ms", out)
    return {"rps": float(m.group(1)) if m else 0.0, "mean_ms": float(lat.group(1)) if lat else None,
            "cpu": res.get("cpu"), "config": f"2-stmt pipeline -M prepared -c {clients} -j 2",
            **({} if m else {"note": out.strip()[-200:]})}


def run_wrk(args, op, url, server_pid):
    script = os.path.join(args["harness"], "wrk", "read.lua") if op == "R" else args["w_wrk"]
    base = ["wrk", f"-t{args['wrk_threads']}", f"-c{args['wrk_connections']}"]
    if op == "W":
        checkpoint(args)
    subprocess.run(base + [f"-d{args['wrk_warmup']}s", "-s", script, url, "--", args["tokens"]],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, HARNESS_WRK=os.path.join(args["harness"], "wrk")))
    if op == "W":
        checkpoint(args)
    d = args["wrk_duration"]
    env = dict(os.environ, HARNESS_WRK=os.path.join(args["harness"], "wrk"))
    proc = subprocess.Popen(base + [f"-d{d}s", "--timeout", "10s", "-s", script, url, "--", args["tokens"]],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    pm = args["postmaster"]
    t, res = sample_during(proc, {"db": lambda: [pm] + children(pm), "srv": lambda: [server_pid], "gen": lambda: [proc.pid]},
                           3, max(4, d - 6))
    out = proc.communicate()[0]
    t.join()
    m = re.search(r"^WRKRESULT (.*)$", out, re.M)
    row = {"cpu": res.get("cpu"), "config": f"wrk -t{args['wrk_threads']} -c{args['wrk_connections']}"}
    if m:
        v = {k: float(x) for k, x in (kv.split("=") for kv in m.group(1).split())}
        row.update(rps=v["requests"] / (v["duration_us"] / 1e6), p50_ms=v["p50_us"] / 1000, p99_ms=v["p99_us"] / 1000,
                   requests=int(v["requests"]),
                   errors=int(v["err_connect"] + v["err_read"] + v["err_write"] + v["err_status"] + v["err_timeout"]))
    else:
        row.update(rps=0.0, note="wrk failed: " + out.strip()[-200:])
    return row


def cmd_run(argv):
    opts, systems = {}, []
    i = 0
    while i < len(argv):
        if argv[i] == "--system":
            name, url, pid = argv[i + 1].split("=", 2)
            systems.append((name, url, int(pid)))
        else:
            opts[argv[i][2:]] = argv[i + 1]
        i += 2
    work = opts["work"]
    args = {
        "harness": opts["harness"], "work": work, "sock": os.path.join(work, "pg", "sock"),
        "pg_bin": os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"), "tokens": os.path.join(work, "tokens.tsv"),
        "postmaster": postmaster_pid(work), "n_users": int(os.environ.get("N_USERS", "10000")),
        "pgb_duration": int(os.environ.get("PGB_DURATION", "20")),
        "wrk_threads": int(os.environ.get("WRK_THREADS", "2")), "wrk_connections": int(os.environ.get("WRK_CONNECTIONS", "64")),
        "wrk_duration": int(os.environ.get("WRK_DURATION", "15")), "wrk_warmup": int(os.environ.get("WRK_WARMUP", "3")),
    }
    # W: the harness's scripts send COMPLETE, which our schema's state machine refuses for the
    # seed's users (P0001: 400 from a server, an aborted client in pgbench); W_SCRIPTS=harness
    # uses them anyway.
    here = os.path.dirname(os.path.abspath(__file__))
    if os.environ.get("W_SCRIPTS", "valid") == "harness":
        args["w_pgbench"] = os.path.join(opts["harness"], "pg", "write_pipe.sql")
        args["w_wrk"] = os.path.join(opts["harness"], "wrk", "write.lua")
    else:
        args["w_pgbench"] = os.path.join(here, "pg", "write_pipe_valid.sql")
        args["w_wrk"] = os.path.join(here, "wrk", "write-valid.lua")
    run_id = opts.get("run-id") or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    label = opts.get("label", "quiet")
    results = os.path.join(work, "compare.jsonl")
    clients = [int(c) for c in opts.get("pgbench-clients", "8 32").split()]
    for rnd in range(1, int(opts.get("rounds", "3")) + 1):
        for op in opts.get("ops", "R W").split():
            rows = []
            for c in clients:
                rows.append(dict(system="ceiling", **run_pgbench(args, op, c)))
            for name, url, pid in systems:
                rows.append(dict(system=name, url=url, **run_wrk(args, op, url, pid)))
            with open(results, "a") as f:
                for r in rows:
                    r.update(run=run_id, label=label, round=rnd, op=op)
                    f.write(json.dumps(r) + "\n")
                    cpu = r.get("cpu") or {}
                    print(f"  round {rnd} {op} {r['system']:<8} {r['config']:<40} {r['rps']:8.0f}/s"
                          + (f"  p99 {r['p99_ms']:.1f} ms" if r.get("p99_ms") else "")
                          + f"  cpu {json.dumps(cpu)}" + (f"  errors {r['errors']}" if r.get("errors") else ""),
                          file=sys.stderr, flush=True)
    print(run_id)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs):
    xs = [x for x in xs if x is not None]
    if len(xs) < 2 or not med(xs):
        return None
    return (max(xs) - min(xs)) / med(xs)


def cmd_report(argv):
    path, runs = argv[0], argv[1:]
    rows = [json.loads(line) for line in open(path) if line.strip()]
    for run in runs:
        mine = [r for r in rows if r["run"] == run]
        if not mine:
            continue
        label = mine[0].get("label", "")
        rounds = sorted({r["round"] for r in mine})
        systems = []
        for r in mine:
            if r["system"] != "ceiling" and r["system"] not in systems:
                systems.append(r["system"])
        print(f"\n### run {run} ({label}, {len(rounds)} rounds, interleaved: ceiling, " + ", ".join(systems) + ")\n")
        print("| op | system | req/s median | spread | ÷ ceiling | ÷ peer | p99 ms | CPU µs/req srv | CPU µs/req db | "
              "db+srv µs/req | other load (% of a core) | errors |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for op in ("R", "W"):
            by_round = {}
            for rnd in rounds:
                cs = [r for r in mine if r["op"] == op and r["round"] == rnd and r["system"] == "ceiling"]
                if cs:
                    best = max(cs, key=lambda r: r["rps"])
                    by_round.setdefault("ceiling", {})[rnd] = best
                for r in mine:
                    if r["op"] == op and r["round"] == rnd and r["system"] != "ceiling":
                        by_round.setdefault(r["system"], {})[rnd] = r
            if not by_round:
                continue
            for system in ["ceiling"] + systems:
                rs = by_round.get(system, {})
                if not rs:
                    continue
                rps = [r["rps"] for r in rs.values()]

                def ratio(other):
                    vals = [rs[k]["rps"] / by_round[other][k]["rps"] for k in rs
                            if k in by_round.get(other, {}) and by_round[other][k]["rps"]]
                    return med(vals)

                def per_req(key):
                    vals = []
                    for r in rs.values():
                        cpu = r.get("cpu")
                        if cpu and r["rps"] and key in cpu:
                            vals.append(1e4 * cpu[key] / r["rps"])
                    return med(vals)

                c = ratio("ceiling") if system != "ceiling" else None
                p = ratio("peer") if system not in ("ceiling", "peer") else None
                srv, db = per_req("srv"), per_req("db")
                other = med([(r.get("cpu") or {}).get("other") for r in rs.values()])
                cfg = ""
                if system == "ceiling":
                    cfg = " (best -c: " + "/".join(r["config"].split("-c ")[1].split()[0] for _, r in sorted(rs.items())) + ")"
                sp = spread(rps)
                p99 = med([r.get("p99_ms") for r in rs.values()])
                errs = sum(r.get("errors") or 0 for r in rs.values())
                f = lambda x, fmt: "" if x is None else fmt.format(x)
                print(f"| {op} | {system}{cfg} | {med(rps):.0f} | {f(sp, '{:.0%}')} | {f(c, '{:.0%}')} | {f(p, '{:.2f}×')} | "
                      f"{f(p99, '{:.1f}')} | {f(srv, '{:.0f}')} | {f(db, '{:.0f}')} | "
                      f"{f((srv or 0) + db if db is not None else None, '{:.0f}')} | {f(other, '{:.0f}')} | {errs} |")
        print("\nceiling = the best of pgbench's -c counts in the same round (2-statement pipeline, -M prepared); "
              "÷ ceiling and ÷ peer are medians of the per-round ratios; CPU per request from /proc per process "
              "(db = the bench cluster's processes only); other load = the rest of the machine's busy time.")


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    {"run": cmd_run, "report": cmd_report}[cmd](argv)


if __name__ == "__main__":
    main()
