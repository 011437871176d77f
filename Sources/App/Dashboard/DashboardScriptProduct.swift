extension DashboardAssets {
    /// The six success metrics (cards on the onboarding page).
    static let metricsScript = #"""
          // Each card: the value against its target; "no data" when the rows behind it are absent.
          function metricCard(m) {
            const of = (n, d, what) => n + " of " + d + " " + what;
            let value = null, detail = "", empty = "";
            switch (m.key) {
              case "completion_rate":
                empty = "No sign-ups in this window.";
                if (m.value !== null) { value = percent(m.value); detail = of(m.numerator, m.denominator, "sign-ups completed onboarding."); }
                break;
              case "account_creation_rate":
                empty = "No account_prompt_shown events in this window.";
                if (m.value !== null) {
                  value = percent(m.value);
                  detail = of(m.numerator, m.denominator, "people shown the prompt created an account") +
                    ((m.methods || []).length ? " (" + m.methods.map(x => x.method + " " + x.persons).join(", ") + ")." : ".");
                }
                break;
              case "drop_off":
                empty = "No sign-ups in this window.";
                if (m.steps.length) {
                  value = stepName(m.steps[0].step);
                  detail = m.steps.map(s => stepName(s.step) + ": " + s.users + " stopped (" + percent(s.pct) + " of " + m.denominator + ")").join(" · ");
                } else if (m.denominator > 0) { value = "None"; detail = "Everyone who signed up completed."; }
                break;
              case "time_to_complete":
                empty = "No completions in this window.";
                if (m.value !== null) { value = seconds(m.value); detail = "Median of " + m.denominator + (m.denominator === 1 ? " completion" : " completions") + "; 90th percentile " + seconds(m.p90_seconds) + "."; }
                break;
              case "error_rate":
                empty = "No app events in this window.";
                if (m.value !== null) detail = of(m.numerator, m.denominator, "app events were errors") + ", from " + m.persons + (m.persons === 1 ? " person" : " people") + " (" + m.rule + ").";
                if (m.value !== null) value = percent(m.value);
                break;
              case "skip_patterns":
                empty = "No account_skipped or *_skipped events in this window.";
                if (m.screens.length) {
                  value = m.screens[0].screen;
                  detail = m.screens.map(s => s.screen + ": " + s.skips + (s.skips === 1 ? " skip" : " skips")).join(" · ") +
                    (m.value === null ? "" : " — " + percent(m.value) + " of the people shown the prompt skipped.");
                }
                break;
            }
            const target = m.target ? "Target " + m.target.op + " " + (m.unit === "seconds" ? seconds(m.target.value) : percent(m.target.value)) :
              (m.key === "drop_off" ? "Where people stop" : "Which screens people skip");
            const verdict = m.met === true ? ["met", "✓ on target"] : m.met === false ? ["missed", "✗ off target"] : ["", ""];
            return el("div", { class: "kpi metric " + verdict[0], "data-metric": m.key }, [
              el("div", { class: "kpi-label", text: m.label }),
              el("div", { class: "kpi-value" + (value === null ? " no-data" : (m.unit === "step" || m.unit === "screen" ? " words" : "")), text: value === null ? "no data" : value }),
              el("div", { class: "metric-target", text: target + (verdict[1] ? " · " + verdict[1] : "") }),
              el("div", { class: "kpi-change", text: value === null ? empty : detail }),
            ]);
          }

          function drawMetrics(data) {
            document.querySelector("#metrics .kpi-box").replaceChildren(el("div", { class: "kpis metrics" }, data.metrics.map(metricCard)));
          }

        """#

    /// The events page: counts per day, a breakdown by one property, the top events.
    static let eventsScript = #"""
          function options(select, values, chosen, first) {
            const list = first ? [first] : [];
            for (const v of values) if (!list.some(([value]) => value === v)) list.push([v, v]);
            if (chosen && !list.some(([value]) => value === chosen)) list.push([chosen, chosen]);
            select.replaceChildren(...list.map(([value, label]) => el("option", { value: value, text: label })));
            select.value = chosen || (first ? first[0] : "");
          }

          function drawEvents(data) {
            const what = data.event || "all events";
            document.getElementById("events-total").textContent = data.total + " × " + what + " from " + data.persons + (data.persons === 1 ? " person" : " people") + ", " + data.from.slice(0, 10) + " to " + data.to.slice(0, 10) + " (UTC, end excluded).";
            const trend = document.querySelector("#events-trend .chart");
            trend.replaceChildren(data.total === 0 ? el("p", { class: "empty", text: "No events in this window." }) :
              lineChart(data.series, [["count", "line", what]], widthOf(trend), what + " per day"));
            document.getElementById("breakdown-title").textContent = what + " by " + data.breakdown;
            const groups = data.breakdown_values.map(g => Object.assign({}, g, { label: g.value === null ? "(not set)" : g.value }));
            document.querySelector("#events-breakdown .chart").replaceChildren(groups.length === 0 ? el("p", { class: "empty", text: "No events in this window." }) :
              barChart(groups, g => g.label, ["count"], g => g.count + " (" + percent(100 * g.count / Math.max(1, data.total)) + ") · " + g.persons + (g.persons === 1 ? " person" : " people")));
            const total = data.top_events.reduce((sum, e) => sum + e.count, 0);
            document.querySelector("#events-top .chart").replaceChildren(data.top_events.length === 0 ? el("p", { class: "empty", text: "No events in this window." }) :
              table(data.top_events.map(e => ({
                event: el("button", { type: "button", class: "link event-link", "data-event": e.event, text: e.event }),
                count: e.count, share: percent(100 * e.count / Math.max(1, total)), people: e.persons,
              })), null, true));
          }

          async function loadEvents() {
            const form = document.getElementById("events-filters");
            const params = formQuery(form);
            say("Loading…");
            try {
              const data = await api("/dashboard/api/events?" + params.toString());
              options(form.elements.event, data.top_events.map(e => e.event), data.event, ["", "All events"]);
              options(form.elements.breakdown, data.properties, data.breakdown);
              drawEvents(data);
              redraw = () => drawEvents(data);
              say("");
            } catch (error) {
              say(error.message, true);
            }
          }

          function initEvents() {
            const form = document.getElementById("events-filters");
            const query = new URLSearchParams(location.search);
            fillForm(form);
            options(form.elements.event, [], query.get("event"), ["", "All events"]);
            options(form.elements.breakdown, ["screen", "method", "section"], query.get("breakdown") || "screen");
            form.addEventListener("submit", event => { event.preventDefault(); loadEvents(); });
            document.getElementById("events-top").addEventListener("click", event => {
              const name = event.target.getAttribute && event.target.getAttribute("data-event");
              if (name === null || name === undefined) return;
              options(form.elements.event, [...form.elements.event.options].map(o => o.value).filter(v => v), name, ["", "All events"]);
              loadEvents();
            });
            loadEvents();
          }

        """#

    /// The experiments page: each multivariate flag's report (the report endpoint's numbers).
    static let experimentsScript = #"""
          function intervalChart(report) {
            const high = Math.max(0.05, ...report.variants.map(v => v.interval[1]));
            return el("div", { class: "intervals" }, report.variants.map(v => {
              const range = el("span", { class: "interval" + (v.variant === report.leader ? " leader" : "") });
              range.style.left = (100 * v.interval[0] / high) + "%";
              range.style.width = (100 * (v.interval[1] - v.interval[0]) / high) + "%";
              const dot = el("span", { class: "rate-dot" });
              dot.style.left = (100 * v.rate / high) + "%";
              return el("div", { class: "bar-row" }, [el("div", { class: "bar-label", text: v.variant }),
                el("div", { class: "bar-line" }, [el("span", { class: "interval-track" }, [range, dot]),
                  el("span", { class: "bar-value", text: percent(100 * v.rate) + " [" + percent(100 * v.interval[0]) + " – " + percent(100 * v.interval[1]) + "]" })])]);
            }));
          }

          function experimentCard(x) {
            const total = x.variants.reduce((sum, v) => sum + v.exposures, 0);
            const weightSum = Object.values(x.weights).reduce((a, b) => a + b, 0) || 1;
            const verdict = x.leader ? el("p", { class: "leader", text: "Leader: " + x.leader + " — beats " + x.control + " (p < 0.05)." }) :
              el("p", { class: "no-leader", text: total === 0 ? "No exposures yet." : "No leader: no variant beats " + x.control + " at p < 0.05 yet." });
            const srm = x.sample_ratio.mismatch ? el("p", { class: "srm", role: "alert", text: "⚠ Sample ratio mismatch: the exposures (" +
              x.variants.map(v => v.variant + " " + v.exposures).join(", ") + ") do not fit the weights (" +
              x.variants.map(v => v.variant + " " + percent(100 * (x.weights[v.variant] || 0) / weightSum)).join(", ") +
              "); χ² = " + x.sample_ratio.chi_square.toFixed(1) + ", p < 0.001. The assignment or the exposure logging is broken: do not trust this comparison." }) : "";
            return el("section", { class: "card experiment", "data-flag": x.flag }, [
              el("h2", { text: x.flag + (x.name ? " · " + x.name : "") }),
              el("p", { class: "about", text: (x.active ? "Active" : "Inactive") + " · " + total + " people exposed · goal: " +
                (x.goal.event ? "event " + x.goal.event : "onboarding state " + stepName(x.goal.onboarding_state)) + " within " + x.days + " days of the first exposure" }),
              srm, verdict, intervalChart(x),
              table(x.variants.map(v => ({
                variant: v.variant, weight: percent(100 * (x.weights[v.variant] || 0) / weightSum), exposures: v.exposures, conversions: v.conversions,
                rate: percent(100 * v.rate), "95% interval": percent(100 * v.interval[0]) + " – " + percent(100 * v.interval[1]),
                "vs control": v.difference === null ? "—" : (v.difference > 0 ? "+" : "") + (100 * v.difference).toFixed(1) + " points",
                "p-value": v.p_value === null ? "—" : (v.p_value < 0.001 ? "< 0.001" : v.p_value.toFixed(3)),
              })), null, true),
            ]);
          }

          async function loadExperiments() {
            const form = document.getElementById("experiments-filters");
            const params = formQuery(form);
            const goal = params.get("goal") || "state:COMPLETE";
            const request = new URLSearchParams({ days: params.get("days") || "14" });
            request.set(goal.startsWith("event:") ? "goal_event" : "goal_state", goal.slice(goal.indexOf(":") + 1));
            say("Loading…");
            try {
              const data = await api("/dashboard/api/experiments?" + request.toString());
              const choices = [["state:COMPLETE", "Onboarding completed"], ...data.goal_events.map(e => ["event:" + e, "Event " + e])];
              if (!choices.some(([value]) => value === goal)) choices.push([goal, goal]);
              form.elements.goal.replaceChildren(...choices.map(([value, label]) => el("option", { value: value, text: label })));
              form.elements.goal.value = goal;
              document.getElementById("experiments").replaceChildren(...(data.experiments.length === 0 ?
                [el("p", { class: "empty", text: "No experiments: a flag with variants (multivariate) is one." })] : data.experiments.map(experimentCard)));
              say("");
            } catch (error) {
              say(error.message, true);
            }
          }

          function initExperiments() {
            const form = document.getElementById("experiments-filters");
            const query = new URLSearchParams(location.search);
            form.elements.goal.replaceChildren(el("option", { value: query.get("goal") || "state:COMPLETE", text: query.get("goal") || "Onboarding completed" }));
            fillForm(form);
            form.addEventListener("submit", event => { event.preventDefault(); loadExperiments(); });
            loadExperiments();
          }

        """#
}
