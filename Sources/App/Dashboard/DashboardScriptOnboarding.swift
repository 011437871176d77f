extension DashboardAssets {
    /// The onboarding page: the numbers at a glance, the charts and tables.
    static let onboardingScript = #"""
          // Vertical columns over days: the completion rate (0-100%).
          function dayChart(rows, width) {
            const height = 200, left = 40, bottom = 28, top = 10;
            const plotWidth = width - left - 8, plotHeight = height - bottom - top;
            const chart = svg("svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img" });
            for (const pct of [0, 50, 100]) {
              const y = top + plotHeight * (1 - pct / 100);
              chart.append(svg("line", { class: "axis", x1: left, x2: width - 8, y1: y, y2: y }));
              chart.append(svg("text", { x: 0, y: y + 4, class: "muted" }, percent(pct)));
            }
            const step = plotWidth / Math.max(1, rows.length);
            const every = Math.ceil(rows.length / Math.max(2, Math.floor(plotWidth / 56)));
            rows.forEach((row, i) => {
              const rate = row.completion_rate_pct === null ? 0 : Number(row.completion_rate_pct);
              const h = plotHeight * rate / 100;
              const bar = svg("rect", { class: "bar", x: left + i * step + step * 0.15, y: top + plotHeight - h, width: Math.max(1, step * 0.7), height: h });
              bar.append(svg("title", {}, row.day + ": " + (row.completion_rate_pct === null ? "no sign-ups" : percent(rate) + " of " + row.signed_up) + ", " + row.completions + " completions"));
              chart.append(bar);
              if (i % every === 0) chart.append(svg("text", { x: left + (i + 0.5) * step, y: height - 8, class: "muted", "text-anchor": "middle" }, row.day.slice(5)));
            });
            return chart;
          }

          // Sign-ups and completions per day (summed over cohorts): two lines.
          function trendChart(rows, width) {
            const byDay = new Map();
            for (const row of rows) {
              const day = byDay.get(row.day) || { day: row.day, signed_up: 0, completions: 0 };
              day.signed_up += Number(row.signed_up) || 0;
              day.completions += Number(row.completions) || 0;
              byDay.set(row.day, day);
            }
            const points = [...byDay.values()].sort((a, b) => (a.day < b.day ? -1 : 1));
            return lineChart(points, [["signed_up", "line", "sign-ups"], ["completions", "line second", "completions"]], width, "sign-ups and completions per day");
          }

          // The numbers asked first, each against the period of the same length before.
          function kpis(rows) {
            const now = rows.find(r => r.period === "current"), before = rows.find(r => r.period === "previous");
            if (!now || !before) return el("p", { class: "empty", text: "No data." });
            const days = Math.round((new Date(now.period_to) - new Date(now.period_from)) / 86400000);
            const items = [
              ["Sign-ups", "sign_ups", v => String(v), "relative", true],
              ["Completion rate", "completion_rate_pct", percent, "points", true],
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
                  change = (delta > 0 ? "▲ +" : "▼ ") + (kind === "points" ? delta.toFixed(1) + " points" : percent(Number(delta.toFixed(1))));
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
            funnel: rows => barChart(rows, r => stepName(r.step), ["users_reached"], r => r.users_reached + (r.users_reached === 1 ? " user" : " users") + (r.pct_of_first === null ? "" : " (" + percent(r.pct_of_first) + ")")),
            // Only the steps someone is at.
            drop_off: rows => barChart(rows.filter(r => Number(r.users_at_step) > 0 || Number(r.users_stuck) > 0), r => stepName(r.step), ["users_at_step", "users_stuck"], (r, s) => s === "users_at_step" ? r.users_at_step + " here" : r.users_stuck + " stuck"),
            step_durations: rows => barChart(rows, r => stepName(r.step), ["median_seconds"], r => "median " + seconds(r.median_seconds) + " · p90 " + seconds(r.p90_seconds) + " · " + r.visits + " visits"),
            daily_completion: dayChart,
          };
          const legends = { drop_off: [["", "at the step now"], ["second", "stuck (longer than the threshold)"]] };

          function drawOnboarding(data, params) {
            document.querySelector("#kpis .kpi-box").replaceChildren(kpis(data.tables.summary || []));
            const daily = data.tables.daily_completion || [];
            const trend = document.querySelector("#trend .chart");
            trend.replaceChildren(
              daily.length === 0 ? el("p", { class: "empty", text: "No data for this window." }) :
                el("div", {}, [el("div", { class: "legend" }, [el("span", { text: "sign-ups" }), el("span", { class: "second", text: "completions" })]), trendChart(daily, widthOf(trend))]));
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
                chartBox.append(charts[name](cohortRows, widthOf(chartBox)));
              }
            }
          }

          async function loadOnboarding() {
            const params = formQuery(document.getElementById("filters"));
            say("Loading…");
            try {
              const range = new URLSearchParams();
              for (const key of ["from", "to", "stuck_hours"]) if (params.get(key)) range.set(key, params.get(key));
              const [data, metrics] = await Promise.all([
                api("/dashboard/api/onboarding?" + params.toString()), api("/dashboard/api/metrics?" + range.toString()),
              ]);
              drawOnboarding(data, params);
              drawMetrics(metrics);
              redraw = () => drawOnboarding(data, params);
              say("");
            } catch (error) {
              say(error.message, true);
            }
          }

          function initOnboarding() {
            const form = document.getElementById("filters");
            fillForm(form);
            form.addEventListener("submit", event => { event.preventDefault(); loadOnboarding(); });
            loadOnboarding();
          }

        """#
}
