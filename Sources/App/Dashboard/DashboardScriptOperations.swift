extension DashboardAssets {
    /// The operations page: the pool, Realtime, requests by route, migrations (every 5 seconds).
    static let operationsScript = #"""
          // Operations
          let previous = null;

          async function loadOperations() {
            try {
              const data = await api("/dashboard/api/operations");
              // "per second now": the server's rate over its last few seconds on the first load,
              // then over the time since the previous load.
              const now = Date.now();
              const rates = new Map(data.routes.map(r => [r.route, r.per_second_now]));
              if (previous) {
                const elapsed = (now - previous.at) / 1000;
                for (const route of data.routes) {
                  const before = previous.routes.get(route.route) || 0;
                  rates.set(route.route, Number(((route.requests - before) / elapsed).toFixed(2)));
                }
              }
              previous = { at: now, routes: new Map(data.routes.map(r => [r.route, r.requests])) };
              document.getElementById("ops-pool").replaceChildren(definitionList(Object.assign({}, data.pool, { uptime: seconds(data.uptime_seconds) })));
              document.getElementById("ops-realtime").replaceChildren(definitionList(data.realtime));
              document.getElementById("ops-routes").replaceChildren(table(data.routes.map(r => ({
                route: r.route, requests: r.requests,
                "per second now": rates.get(r.route),
                "per minute since start": Number((r.requests / Math.max(1, data.uptime_seconds) * 60).toFixed(2)),
                "4xx": r.client_errors, "5xx": r.server_errors, "p50 ms": r.p50_ms, "p99 ms": r.p99_ms, "mean ms": r.mean_ms,
              }))));
              const migrations = Array.isArray(data.migrations) ? data.migrations : [];
              document.getElementById("ops-migrations").replaceChildren(
                Array.isArray(data.migrations) ? "" : el("p", { class: "error", text: show(data.migrations.error) }),
                table(migrations.map(m => ({
                  version: m.version, name: m.name, status: el("span", { class: "status-" + m.status, text: m.status }),
                  applied_at: m.applied_at, "duration ms": m.duration_ms,
                }))));
              say(migrations.some(m => m.status !== "applied") ? "Some migrations are not applied as they are on disk." : "");
            } catch (error) {
              say(error.message, true);
            }
          }

        """#
}
