extension DashboardAssets {
    /// `/dashboard/dashboard.css`.
    static let css = #"""
        :root { --fg: #1d2330; --muted: #5d6679; --line: #d9dde5; --bg: #f5f6f8; --card: #fff; --accent: #3b6fd8; --accent2: #e08a2c; --danger: #c0392b; }
        * { box-sizing: border-box; }
        html { scrollbar-gutter: stable; }
        body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 24px; padding: 10px 24px; background: #1d2330; color: #fff; }
        header nav { display: flex; gap: 4px; flex: 1; }
        header nav a { color: #cfd6e4; text-decoration: none; padding: 6px 12px; border-radius: 6px; }
        header nav a[aria-current="page"], header nav a:hover { background: #34405a; color: #fff; }
        header form { margin: 0; }
        main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 48px; }
        h1 { font-size: 22px; margin: 8px 0 16px; }
        h2 { font-size: 17px; margin: 0 0 6px; }
        h3 { font-size: 14px; margin: 16px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
        .about { color: var(--muted); margin: 0 0 12px; }
        .card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 16px 20px; margin: 0 0 16px; }
        .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(320px, 100%), 1fr)); gap: 16px; }
        .filters { display: flex; flex-wrap: wrap; gap: 12px 20px; align-items: end; margin: 0 0 16px; }
        .filters label { display: flex; flex-direction: column; gap: 4px; color: var(--muted); font-size: 12px; }
        input, select, button { max-width: 100%; font: inherit; padding: 6px 10px; border: 1px solid var(--line); border-radius: 6px; background: #fff; color: var(--fg); }
        button { cursor: pointer; background: var(--accent); color: #fff; border-color: var(--accent); }
        button:hover { filter: brightness(1.08); }
        header button { background: transparent; border-color: #56627c; }
        .link { background: none; border: none; color: var(--accent); padding: 0; text-decoration: underline; }
        table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
        th, td { text-align: left; padding: 5px 10px 5px 0; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { color: var(--muted); font-weight: 600; font-size: 12px; }
        td.num, th.num { text-align: right; }
        details { margin: 10px 0; }
        summary { cursor: pointer; color: var(--muted); }
        a.csv { font-size: 12px; color: var(--accent); }
        #status:empty { display: none; }
        #status { padding: 8px 12px; border-radius: 6px; background: #fff4e0; border: 1px solid #f0d19a; }
        #status.error { background: #fdecea; border-color: #f1b0a8; }
        .chart svg { display: block; width: 100%; height: auto; }
        .chart .bar { fill: var(--accent); }
        .chart .bar.second { fill: var(--accent2); }
        .chart .bar-bg { fill: #eef1f6; }
        .chart text { font-size: 12px; fill: var(--fg); }
        .chart text.muted { fill: var(--muted); }
        .chart .axis { stroke: var(--line); }
        .chart h4 { margin: 10px 0 4px; font-size: 13px; }
        .legend { font-size: 12px; color: var(--muted); margin: 4px 0; }
        .legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 10px; background: var(--accent); vertical-align: -1px; }
        .legend span.second::before { background: var(--accent2); }
        .empty { color: var(--muted); font-style: italic; }
        .kpis { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; }
        .kpi { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
        .kpi-label { color: var(--muted); font-size: 12px; }
        .kpi-value { font-size: 26px; font-weight: 600; font-variant-numeric: tabular-nums; }
        .kpi-change { font-size: 12px; color: var(--muted); }
        .kpi-change.better { color: #1e7d3a; }
        .kpi-change.worse { color: var(--danger); }
        .chart .line { fill: none; stroke: var(--accent); stroke-width: 2; }
        .chart .line.second { stroke: var(--accent2); }
        .chart .dot { fill: var(--accent); stroke: none; }
        .chart .dot.second { fill: var(--accent2); }
        .table-wrap { overflow-x: auto; max-width: 100%; }
        .child { border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; }
        .child h4 { margin: 0 0 6px; }
        td.time, .link { white-space: nowrap; }
        th { white-space: nowrap; }
        dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 16px; margin: 0; }
        dt { color: var(--muted); }
        dd { margin: 0; word-break: break-all; }
        .danger { margin-top: 24px; padding-top: 16px; border-top: 1px solid var(--line); }
        .danger-button { background: var(--danger); border-color: var(--danger); }
        #delete-no { background: #fff; color: var(--fg); border-color: var(--line); }
        .status-applied { color: #1e7d3a; }
        .status-pending, .status-changed, .status-missing { color: var(--danger); font-weight: 600; }
        body.sign-in main { max-width: 380px; margin: 12vh auto; background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 28px; }
        body.sign-in form { display: flex; flex-direction: column; gap: 10px; }
        .error { color: var(--danger); }
        .bars { display: flex; flex-direction: column; gap: 6px; }
        .bar-row { display: grid; grid-template-columns: 150px minmax(0, 1fr); gap: 2px 12px; align-items: center; }
        .bar-label { font-size: 13px; overflow-wrap: anywhere; }
        .bar-series { display: flex; flex-direction: column; gap: 3px; }
        .bar-line { display: grid; grid-template-columns: minmax(60px, 420px) minmax(0, 1fr); gap: 10px; align-items: center; }
        .bar-track, .interval-track { position: relative; display: block; height: 16px; background: #eef1f6; border-radius: 3px; overflow: hidden; }
        .bar-fill { display: block; height: 100%; background: var(--accent); }
        .bar-fill.second { background: var(--accent2); }
        .bar-value { font-size: 13px; font-variant-numeric: tabular-nums; }
        .bar-value.muted { color: var(--muted); }
        .interval { position: absolute; top: 3px; height: 10px; background: #9db5ea; border-radius: 5px; }
        .interval.leader { background: #6cc08b; }
        .rate-dot { position: absolute; top: 2px; width: 12px; height: 12px; margin-left: -6px; border-radius: 6px; background: var(--fg); }
        .intervals { display: flex; flex-direction: column; gap: 6px; margin: 8px 0 12px; }
        .metric { display: flex; flex-direction: column; gap: 2px; }
        .metric.met { border-left: 4px solid #1e7d3a; }
        .metric.missed { border-left: 4px solid var(--danger); }
        .metric-target { font-size: 13px; font-weight: 600; }
        .metric.met .metric-target { color: #1e7d3a; }
        .metric.missed .metric-target { color: var(--danger); }
        .kpi-value.words { font-size: 20px; overflow-wrap: anywhere; }
        .link.event-link { white-space: normal; overflow-wrap: anywhere; text-align: left; }
        .kpi-value.no-data { color: var(--muted); font-size: 20px; font-style: italic; }
        .kpis.metrics { grid-template-columns: repeat(auto-fit, minmax(min(300px, 100%), 1fr)); }
        .srm { padding: 8px 12px; border-radius: 6px; background: #fdecea; border: 1px solid #f1b0a8; color: #8a2319; font-weight: 600; }
        .leader { color: #1e7d3a; font-weight: 600; }
        .no-leader { color: var(--muted); }
        @media (max-width: 600px) {
          header { padding: 10px 12px; }
          header nav { order: 3; flex-basis: 100%; flex-wrap: wrap; }
          header nav a { padding: 6px 8px; }
          header form { margin-left: auto; }
          table.stacked thead { display: none; }
          table.stacked tr { display: block; padding: 6px 0; border-bottom: 1px solid var(--line); }
          table.stacked td { display: flex; justify-content: space-between; gap: 12px; padding: 2px 0; border: 0; text-align: right; }
          table.stacked td::before { content: attr(data-label); color: var(--muted); font-size: 13px; text-align: left; }
          main { padding: 12px 12px 40px; }
          .card { padding: 14px 12px; }
          .bar-row { grid-template-columns: minmax(0, 1fr); }
          .bar-line { grid-template-columns: minmax(0, 1fr); gap: 2px; }
          .kpi-value { font-size: 22px; }
          .filters label, th, .kpi-label, .kpi-change, .legend, a.csv { font-size: 13px; }
          .chart text { font-size: 12px; }
        }
        """#
}
