extension DashboardAssets {
    /// `/dashboard/dashboard.js`: fetches the dashboard's APIs and draws tables and SVG charts.
    /// Data only ever reaches the page as text nodes and attributes (never as HTML).
    static let javascript = #"""
        "use strict";
        (function () {
          const page = document.body.dataset.page;
          const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
          const SVG = "http://www.w3.org/2000/svg";
          const status = document.getElementById("status");

          function say(text, isError) {
            status.textContent = text || "";
            status.className = isError ? "error" : "";
          }

          async function api(url, options) {
            const response = await fetch(url, Object.assign({ credentials: "same-origin", headers: { Accept: "application/json" } }, options || {}));
            if (response.status === 401) { location.href = "/dashboard/"; throw new Error("signed out"); }
            const body = await response.json().catch(() => ({}));
            if (!response.ok) throw new Error(body.message || ("HTTP " + response.status));
            return body;
          }

          function el(tag, attributes, children) {
            const node = document.createElement(tag);
            for (const [key, value] of Object.entries(attributes || {})) {
              if (value === undefined || value === null || value === false) continue;
              if (key === "text") node.textContent = value; else node.setAttribute(key, value);
            }
            for (const child of children || []) node.append(child);
            return node;
          }

          function svg(tag, attributes, text) {
            const node = document.createElementNS(SVG, tag);
            for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
            if (text !== undefined) node.textContent = text;
            return node;
          }

          function show(value) {
            if (value === null || value === undefined) return "—";
            if (typeof value === "object") return JSON.stringify(value);
            return String(value);
          }

          // Steps as people say them: DASHBOARD_STEP_LABELS's name, else CHILD_INFO → "Child info".
          const stepLabels = JSON.parse((document.querySelector('meta[name="step-labels"]') || {}).content || "{}");
          function stepName(step) {
            if (Object.prototype.hasOwnProperty.call(stepLabels, step)) return stepLabels[step];
            const words = String(step).toLowerCase().split("_");
            return words.map((word, i) => i === 0 ? word.charAt(0).toUpperCase() + word.slice(1) : word).join(" ");
          }

          // A time to the second, in the viewer's zone: 2026-11-26 10:19:14 UTC+1.
          function when(value) {
            const date = new Date(value);
            if (typeof value !== "string" || isNaN(date.getTime())) return show(value);
            const pad = n => String(n).padStart(2, "0");
            const offset = -date.getTimezoneOffset();
            const zone = "UTC" + (offset === 0 ? "" : (offset > 0 ? "+" : "-") + Math.floor(Math.abs(offset) / 60) + (Math.abs(offset) % 60 ? ":" + pad(Math.abs(offset) % 60) : ""));
            return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) + " " +
              pad(date.getHours()) + ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds()) + " " + zone;
          }

          function cell(key, value) {
            return /_at$/.test(key) && typeof value === "string" ? when(value) : show(value);
          }

          function seconds(value) {
            if (value === null || value === undefined) return "—";
            const s = Number(value);
            if (s < 90) return s.toFixed(s < 10 ? 1 : 0) + " s";
            if (s < 5400) return (s / 60).toFixed(1) + " min";
            if (s < 172800) return (s / 3600).toFixed(1) + " h";
            return (s / 86400).toFixed(1) + " d";
          }

          function table(rows, columns) {
            if (!rows || rows.length === 0) return el("p", { class: "empty", text: "No data." });
            columns = columns || Object.keys(rows[0]);
            const head = el("tr", {}, columns.map(c => el("th", { class: typeof rows[0][c] === "number" ? "num" : null, text: c })));
            const body = rows.map(row => el("tr", {}, columns.map(c => {
              const value = row[c];
              if (value instanceof Node) return el("td", {}, [value]);
              return el("td", { class: typeof value === "number" ? "num" : (/_at$/.test(c) ? "time" : null), text: cell(c, value) });
            })));
            // Wide tables scroll inside their card, never the page.
            return el("div", { class: "table-wrap" }, [el("table", {}, [el("thead", {}, [head]), el("tbody", {}, body)])]);
          }

          function definitionList(object) {
            if (!object) return el("p", { class: "empty", text: "None." });
            return el("dl", {}, Object.entries(object).flatMap(([key, value]) => [el("dt", { text: key }), el("dd", { text: cell(key, value) })]));
          }

          function byCohort(rows) {
            const groups = new Map();
            for (const row of rows) {
              if (!groups.has(row.cohort)) groups.set(row.cohort, []);
              groups.get(row.cohort).push(row);
            }
            return groups;
          }

          // Horizontal bars: one row per item, one or two series.
          function barChart(rows, label, series, text) {
            const rowHeight = 26, labelWidth = 130, width = 860, barWidth = 420;
            const max = Math.max(1, ...rows.flatMap(row => series.map(s => Number(row[s]) || 0)));
            const height = rows.length * rowHeight * series.length + 8;
            const chart = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img" });
            rows.forEach((row, i) => {
              const top = i * rowHeight * series.length + 4;
              chart.append(svg("text", { x: 0, y: top + 16 }, label(row)));
              series.forEach((s, j) => {
                const y = top + j * rowHeight;
                const value = Number(row[s]) || 0;
                chart.append(svg("rect", { class: "bar-bg", x: labelWidth, y: y + 3, width: barWidth, height: rowHeight - 8, rx: 3 }));
                chart.append(svg("rect", { class: j === 0 ? "bar" : "bar second", x: labelWidth, y: y + 3, width: Math.max(0, barWidth * value / max), height: rowHeight - 8, rx: 3 }));
                chart.append(svg("text", { x: labelWidth + barWidth + 8, y: y + 16, class: j === 0 ? "" : "muted" }, text(row, s)));
              });
            });
            return chart;
          }

          // Vertical columns over days: the completion rate (0-100 %).
          function dayChart(rows) {
            const width = 760, height = 200, left = 36, bottom = 28, top = 10;
            const plotWidth = width - left - 8, plotHeight = height - bottom - top;
            const chart = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img" });
            for (const pct of [0, 50, 100]) {
              const y = top + plotHeight * (1 - pct / 100);
              chart.append(svg("line", { class: "axis", x1: left, x2: width - 8, y1: y, y2: y }));
              chart.append(svg("text", { x: 0, y: y + 4, class: "muted" }, pct + "%"));
            }
            const step = plotWidth / Math.max(1, rows.length);
            rows.forEach((row, i) => {
              const rate = row.completion_rate_pct === null ? 0 : Number(row.completion_rate_pct);
              const h = plotHeight * rate / 100;
              const bar = svg("rect", { class: "bar", x: left + i * step + step * 0.15, y: top + plotHeight - h, width: Math.max(1, step * 0.7), height: h });
              bar.append(svg("title", {}, row.day + ": " + (row.completion_rate_pct === null ? "no sign-ups" : rate + "% of " + row.signed_up) + ", " + row.completions + " completions"));
              chart.append(bar);
              const every = Math.ceil(rows.length / 10);
              if (i % every === 0) chart.append(svg("text", { x: left + i * step, y: height - 8, class: "muted" }, row.day.slice(5)));
            });
            return chart;
          }

          // Sign-ups and completions per day (summed over cohorts): two lines.
          function trendChart(rows) {
            const byDay = new Map();
            for (const row of rows) {
              const day = byDay.get(row.day) || { day: row.day, signed_up: 0, completions: 0 };
              day.signed_up += Number(row.signed_up) || 0;
              day.completions += Number(row.completions) || 0;
              byDay.set(row.day, day);
            }
            const points = [...byDay.values()].sort((a, b) => (a.day < b.day ? -1 : 1));
            const width = 760, height = 220, left = 36, right = 12, bottom = 28, top = 10;
            const plotWidth = width - left - right, plotHeight = height - bottom - top;
            const max = Math.max(1, ...points.flatMap(p => [p.signed_up, p.completions]));
            const x = i => left + (points.length < 2 ? plotWidth / 2 : i * plotWidth / (points.length - 1));
            const y = v => top + plotHeight * (1 - v / max);
            const chart = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img", "aria-label": "sign-ups and completions per day" });
            for (const value of [...new Set([0, Math.round(max / 2), max])]) {
              chart.append(svg("line", { class: "axis", x1: left, x2: width - right, y1: y(value), y2: y(value) }));
              chart.append(svg("text", { x: 0, y: y(value) + 4, class: "muted" }, String(value)));
            }
            [["signed_up", "line", "sign-ups"], ["completions", "line second", "completions"]].forEach(([key, cls, what]) => {
              chart.append(svg("polyline", { class: cls, points: points.map((p, i) => x(i) + "," + y(p[key])).join(" ") }));
              points.forEach((p, i) => {
                const dot = svg("circle", { class: "dot " + cls, cx: x(i), cy: y(p[key]), r: 3 });
                dot.append(svg("title", {}, p.day + ": " + p[key] + " " + what));
                chart.append(dot);
              });
            });
            const every = Math.ceil(points.length / 10);
            points.forEach((p, i) => { if (i % every === 0) chart.append(svg("text", { x: x(i) - 14, y: height - 8, class: "muted" }, p.day.slice(5))); });
            return chart;
          }

          // The numbers asked first, each against the period of the same length before.
          function kpis(rows) {
            const now = rows.find(r => r.period === "current"), before = rows.find(r => r.period === "previous");
            if (!now || !before) return el("p", { class: "empty", text: "No data." });
            const days = Math.round((new Date(now.period_to) - new Date(now.period_from)) / 86400000);
            const items = [
              ["Sign-ups", "sign_ups", v => String(v), "relative", true],
              ["Completion rate", "completion_rate_pct", v => v + " %", "points", true],
              ["Completions", "completions", v => String(v), "relative", true],
              ["Median time to complete", "median_seconds_to_complete", seconds, "relative", false],
            ];
            return el("div", { class: "kpis" }, items.map(([label, key, format, kind, upIsGood]) => {
              const a = now[key], b = before[key];
              let change = "no earlier data", direction = "";
              if (a !== null && b !== null) {
                const delta = kind === "points" ? a - b : (b === 0 ? null : (a - b) / b * 100);
                if (delta === null) change = a === 0 ? "no change" : "new";
                else if (Math.abs(delta) < 0.05) change = "no change";
                else {
                  change = (delta > 0 ? "▲ +" : "▼ ") + delta.toFixed(1) + (kind === "points" ? " points" : " %");
                  direction = (delta > 0) === upIsGood ? "better" : "worse";
                }
              }
              return el("div", { class: "kpi", "data-kpi": key }, [
                el("div", { class: "kpi-label", text: label }),
                el("div", { class: "kpi-value", text: a === null ? "—" : format(a) }),
                el("div", { class: "kpi-change " + direction, text: change + " vs the " + days + " days before" }),
              ]);
            }));
          }

          const charts = {
            funnel: rows => barChart(rows, r => stepName(r.step), ["users_reached"], r => r.users_reached + (r.users_reached === 1 ? " user" : " users") + (r.pct_of_first === null ? "" : " (" + r.pct_of_first + "%)")),
            // Only the steps someone is at.
            drop_off: rows => barChart(rows.filter(r => Number(r.users_at_step) > 0 || Number(r.users_stuck) > 0), r => stepName(r.step), ["users_at_step", "users_stuck"], (r, s) => s === "users_at_step" ? r.users_at_step + " here" : r.users_stuck + " stuck"),
            step_durations: rows => barChart(rows, r => stepName(r.step), ["median_seconds"], r => "median " + seconds(r.median_seconds) + " · p90 " + seconds(r.p90_seconds) + " · " + r.visits + " visits"),
            daily_completion: dayChart,
          };
          const legends = { drop_off: [["", "at the step now"], ["second", "stuck (longer than the threshold)"]] };

          async function loadOnboarding() {
            const form = document.getElementById("filters");
            const params = new URLSearchParams();
            for (const [key, value] of new FormData(form)) if (value !== "") params.set(key, value);
            history.replaceState(null, "", "?" + params.toString());
            say("Loading…");
            try {
              const data = await api("/dashboard/api/onboarding?" + params.toString());
              document.querySelector("#kpis .kpi-box").replaceChildren(kpis(data.tables.summary || []));
              const daily = data.tables.daily_completion || [];
              document.querySelector("#trend .chart").replaceChildren(
                daily.length === 0 ? el("p", { class: "empty", text: "No data for this window." }) :
                  el("div", {}, [el("div", { class: "legend" }, [el("span", { text: "sign-ups" }), el("span", { class: "second", text: "completions" })]), trendChart(daily)]));
              for (const section of document.querySelectorAll("section[data-table]")) {
                const name = section.dataset.table;
                const rows = data.tables[name] || [];
                section.querySelector(".numbers").replaceChildren(name === "stuck_users" ? table(rows.map(r => ({
                  user: el("a", { href: "/dashboard/users#" + r.user_id, text: r.email || "(anonymous)" }),
                  step: stepName(r.step), "stuck since": when(r.stuck_since), "stuck for": seconds(r.hours_stuck * 3600),
                }))) : table(rows));
                section.querySelector("a.csv").setAttribute("href", "/dashboard/api/onboarding/" + name + ".csv?" + params.toString());
                const chartBox = section.querySelector(".chart");
                if (!chartBox) continue;
                chartBox.replaceChildren();
                if (rows.length === 0) { chartBox.append(el("p", { class: "empty", text: "No data for this window." })); continue; }
                if (legends[name]) chartBox.append(el("div", { class: "legend" }, legends[name].map(([c, t]) => el("span", { class: c || null, text: t }))));
                const groups = byCohort(rows);
                let shown = 0;
                for (const [cohort, cohortRows] of groups) {
                  if (shown++ === 12) { chartBox.append(el("p", { class: "empty", text: "More cohorts in the numbers below." })); break; }
                  if (groups.size > 1) chartBox.append(el("h4", { text: "Cohort " + cohort }));
                  chartBox.append(charts[name](cohortRows));
                }
              }
              say("");
            } catch (error) {
              say(error.message, true);
            }
          }

          function initOnboarding() {
            const form = document.getElementById("filters");
            const query = new URLSearchParams(location.search);
            for (const element of form.elements) if (element.name && query.has(element.name)) element.value = query.get(element.name);
            form.addEventListener("submit", event => { event.preventDefault(); loadOnboarding(); });
            loadOnboarding();
          }

          // Users
          let currentUser = null;
          let searches = 0;

          async function search() {
            const q = document.querySelector('#search input[name="q"]').value.trim();
            const mine = ++searches;
            try {
              const users = await api("/dashboard/api/users?q=" + encodeURIComponent(q));
              if (mine !== searches) return;  // a later search answers instead
              const rows = users.map(u => ({
                email: el("button", { type: "button", class: "link", "data-user": u.id, text: u.email || "(anonymous)" }),
                id: u.id, provider: u.provider, onboarding_state: u.onboarding_state, created_at: u.created_at, last_sign_in_at: u.last_sign_in_at,
              }));
              document.getElementById("results").replaceChildren(users.length === 50 ? el("p", { class: "about", text: "The newest 50 matches." }) : "", table(rows));
              say(users.length === 0 ? "No user matches." : "");
            } catch (error) {
              say(error.message, true);
            }
          }

          async function openUser(id) {
            try {
              const data = await api("/dashboard/api/users/" + encodeURIComponent(id));
              currentUser = data.user;
              history.replaceState(null, "", "#" + id);
              document.getElementById("user").hidden = false;
              document.getElementById("user-title").textContent = data.user.email || "Anonymous user " + data.user.id;
              document.getElementById("user-account").replaceChildren(definitionList(data.user));
              document.getElementById("user-profile").replaceChildren(definitionList(data.profile));
              // One card per child, every column in it (a table of them is too wide to read).
              document.getElementById("user-children").replaceChildren(data.children.length === 0 ? el("p", { class: "empty", text: "No children." }) :
                el("div", { class: "grid" }, data.children.map(child => el("div", { class: "child" }, [el("h4", { text: child.name }), definitionList(child)]))));
              document.getElementById("user-providers").replaceChildren(table(data.providers));
              document.getElementById("user-sessions").replaceChildren(table(data.sessions));
              document.getElementById("delete-confirm").hidden = true;
              document.getElementById("delete-start").hidden = false;
              say("");
            } catch (error) {
              say(error.message, true);
            }
          }

          async function deleteUser() {
            if (!currentUser) return;
            try {
              await api("/dashboard/api/users/" + encodeURIComponent(currentUser.id), { method: "DELETE", headers: { Accept: "application/json", "X-CSRF-Token": csrf } });
              say("Deleted " + (currentUser.email || currentUser.id) + ".");
              currentUser = null;
              document.getElementById("user").hidden = true;
              history.replaceState(null, "", location.pathname);
              search().then(() => say("User deleted."));
            } catch (error) {
              say(error.message, true);
            }
          }

          function initUsers() {
            document.getElementById("search").addEventListener("submit", event => { event.preventDefault(); search(); });
            document.getElementById("results").addEventListener("click", event => {
              const id = event.target.getAttribute && event.target.getAttribute("data-user");
              if (id) openUser(id);
            });
            document.getElementById("delete-start").addEventListener("click", () => {
              document.getElementById("delete-name").textContent = currentUser ? (currentUser.email || currentUser.id) : "";
              document.getElementById("delete-confirm").hidden = false;
              document.getElementById("delete-start").hidden = true;
            });
            document.getElementById("delete-no").addEventListener("click", () => {
              document.getElementById("delete-confirm").hidden = true;
              document.getElementById("delete-start").hidden = false;
            });
            document.getElementById("delete-yes").addEventListener("click", deleteUser);
            search();
            if (location.hash.length > 1) openUser(location.hash.slice(1));
          }

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

          if (page === "onboarding") initOnboarding();
          if (page === "users") initUsers();
          if (page === "operations") { loadOperations(); setInterval(loadOperations, 5000); }
        })();
        """#
}
