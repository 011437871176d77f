extension DashboardAssets {
    /// `/dashboard/dashboard.js`: fetches the dashboard's APIs and draws tables and charts. Data
    /// only ever reaches the page as text nodes and attributes (never as HTML). One script in one
    /// function scope: the shared helpers here, then each page's part.
    static let javascript =
        scriptCore + onboardingScript + metricsScript + eventsScript + experimentsScript + usersScript + operationsScript + #"""
                      keepWindow();
                      if (page === "onboarding") initOnboarding();
                      if (page === "events") initEvents();
                      if (page === "experiments") initExperiments();
                      if (page === "users") initUsers();
                      if (page === "operations") { loadOperations(); setInterval(loadOperations, 5000); }
                    })();

            """#

    /// The helpers every page uses.
    static let scriptCore = #"""
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

          // A duration as people say it: 45 s, 4 min 20 s, 2 h 5 min, 3 d 4 h.
          function seconds(value) {
            if (value === null || value === undefined || value === "" || isNaN(Number(value))) return "—";
            let s = Math.round(Number(value));
            if (s === 0 && Number(value) > 0) return "< 1 s";
            if (s < 60) return s + " s";
            const parts = [];
            for (const [unit, size] of [["d", 86400], ["h", 3600], ["min", 60], ["s", 1]]) {
              if (s < size && parts.length === 0) continue;
              const n = Math.floor(s / size);
              s -= n * size;
              parts.push([n, unit]);
              if (parts.length === 2) break;
            }
            return parts.filter(([n], i) => i === 0 || n > 0).map(([n, unit]) => n + " " + unit).join(" ");
          }

          // The one percentage format: 66.7%, 90%, 0.95% (two decimals below 1, so 0.95% is not 1%).
          function percent(value) {
            if (value === null || value === undefined || isNaN(Number(value))) return "—";
            const v = Number(value);
            return v.toLocaleString("en-US", { maximumFractionDigits: Math.abs(v) < 1 ? 2 : 1 }) + "%";
          }

          // A chart's width in CSS pixels: SVG is drawn 1:1, so its text keeps its size on a phone.
          function widthOf(box) {
            return Math.max(260, Math.round((box && box.clientWidth) || 760));
          }

          // Redraws the page's charts from the data already loaded when the page's width changes
          // (a phone turned, a window resized, a scroll bar that appeared once the page grew).
          let redraw = null, drawnWidth = null, resizing = null;
          new ResizeObserver(entries => {
            const width = Math.round(entries[0].contentRect.width);
            if (width === drawnWidth) return;
            drawnWidth = width;
            clearTimeout(resizing);
            resizing = setTimeout(() => { if (redraw) redraw(); }, 100);
          }).observe(document.querySelector("main") || document.body);

          // `stacked`: on a phone, each row is a block of "column: value" lines instead of a wide row.
          function table(rows, columns, stacked) {
            if (!rows || rows.length === 0) return el("p", { class: "empty", text: "No data." });
            columns = columns || Object.keys(rows[0]);
            const head = el("tr", {}, columns.map(c => el("th", { class: typeof rows[0][c] === "number" ? "num" : null, text: c })));
            const body = rows.map(row => el("tr", {}, columns.map(c => {
              const value = row[c];
              if (value instanceof Node) return el("td", { "data-label": c }, [value]);
              return el("td", { class: typeof value === "number" ? "num" : (/_at$/.test(c) ? "time" : null), "data-label": c, text: cell(c, value) });
            })));
            // Wide tables scroll inside their card, never the page.
            return el("div", { class: "table-wrap" }, [el("table", { class: stacked ? "stacked" : null }, [el("thead", {}, [head]), el("tbody", {}, body)])]);
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

          // Horizontal bars as HTML rows (a phone wraps them): one row per item, one or two series.
          function barChart(rows, label, series, text) {
            const max = Math.max(1, ...rows.flatMap(row => series.map(s => Number(row[s]) || 0)));
            return el("div", { class: "bars" }, rows.map(row => el("div", { class: "bar-row" }, [
              el("div", { class: "bar-label", text: label(row) }),
              el("div", { class: "bar-series" }, series.map((s, j) => {
                const fill = el("span", { class: j === 0 ? "bar-fill" : "bar-fill second" });
                fill.style.width = (100 * Math.max(0, Number(row[s]) || 0) / max) + "%";  // CSSOM, which the CSP allows
                return el("div", { class: "bar-line" }, [el("span", { class: "bar-track" }, [fill]), el("span", { class: j === 0 ? "bar-value" : "bar-value muted", text: text(row, s) })]);
              })),
            ])));
          }

          // Lines over days: `series` is [key, class, what] per line; points have `day` and the keys.
          function lineChart(points, series, width, label) {
            const height = 220, left = 40, right = 12, bottom = 28, top = 10;
            const plotWidth = width - left - right, plotHeight = height - bottom - top;
            const max = Math.max(1, ...points.flatMap(p => series.map(([key]) => Number(p[key]) || 0)));
            const x = i => left + (points.length < 2 ? plotWidth / 2 : i * plotWidth / (points.length - 1));
            const y = v => top + plotHeight * (1 - v / max);
            const chart = svg("svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img", "aria-label": label });
            for (const value of [...new Set([0, Math.round(max / 2), max])]) {
              chart.append(svg("line", { class: "axis", x1: left, x2: width - right, y1: y(value), y2: y(value) }));
              chart.append(svg("text", { x: 0, y: y(value) + 4, class: "muted" }, String(value)));
            }
            series.forEach(([key, cls, what]) => {
              chart.append(svg("polyline", { class: cls, points: points.map((p, i) => x(i) + "," + y(Number(p[key]) || 0)).join(" ") }));
              points.forEach((p, i) => {
                const dot = svg("circle", { class: "dot " + cls, cx: x(i), cy: y(Number(p[key]) || 0), r: 3 });
                dot.append(svg("title", {}, p.day + ": " + p[key] + " " + what));
                chart.append(dot);
              });
            });
            // A day label every 56 px at most.
            const every = Math.ceil(points.length / Math.max(2, Math.floor(plotWidth / 56)));
            points.forEach((p, i) => { if (i % every === 0) chart.append(svg("text", { x: x(i), y: height - 8, class: "muted", "text-anchor": "middle" }, p.day.slice(5))); });
            return chart;
          }

          // Carries the date range from page to page (the nav links and the forms share from/to).
          function keepWindow() {
            const query = new URLSearchParams(location.search);
            for (const link of document.querySelectorAll("header nav a")) {
              const target = new URLSearchParams();
              for (const key of ["from", "to"]) if (query.get(key)) target.set(key, query.get(key));
              const base = link.getAttribute("href").split("?")[0];
              link.setAttribute("href", base + (target.toString() ? "?" + target.toString() : ""));
            }
          }

          // A form's non-empty fields as the query string, which the address bar keeps.
          function formQuery(form) {
            const params = new URLSearchParams();
            for (const [key, value] of new FormData(form)) if (value !== "") params.set(key, value);
            history.replaceState(null, "", "?" + params.toString());
            keepWindow();
            return params;
          }

          // Fills a form from the address bar's query string.
          function fillForm(form) {
            const query = new URLSearchParams(location.search);
            for (const element of form.elements) if (element.name && query.has(element.name)) element.value = query.get(element.name);
          }


        """#
}
