import HTTP

/// The dashboard's HTML: the sign-in page and the shell of each page (the script fills it in).
/// No inline script or style anywhere: the Content-Security-Policy forbids both.
enum DashboardAssets {
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }

    static func head(_ title: String, extra: String = "") -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="same-origin">
        <link rel="icon" href="data:,">
        <title>\(escape(title)) · onboard</title>
        <link rel="stylesheet" href="/dashboard/dashboard.css">
        \(extra)
        </head>
        """
    }

    static func signInPage(message: String?, password: Bool, serviceKey: Bool) -> String {
        let what = [password ? "the dashboard password" : nil, serviceKey ? "the service_role key" : nil].compactMap { $0 }.joined(separator: " or ")
        return head("Sign in") + """
            <body class="sign-in">
            <main>
            <h1>onboard dashboard</h1>
            <form method="post" action="/dashboard/sign-in">
            <label for="secret">Sign in with \(escape(what))</label>
            <input id="secret" name="secret" type="password" autocomplete="current-password" required autofocus>
            <button type="submit">Sign in</button>
            </form>
            \(message.map { "<p class=\"error\" role=\"alert\">\(escape($0))</p>" } ?? "")
            </main>
            </body>
            </html>
            """
    }

    static func shell(page: String, csrfToken: String, stepLabels: [String: String] = [:]) -> String {
        let labels = "{" + stepLabels.sorted { $0.key < $1.key }.map { jsonString($0.key) + ":" + jsonString($0.value) }.joined(separator: ",") + "}"
        let links = [
            ("onboarding", "/dashboard/", "Onboarding"), ("events", "/dashboard/events", "Events"), ("experiments", "/dashboard/experiments", "Experiments"),
            ("users", "/dashboard/users", "Users"), ("operations", "/dashboard/operations", "Operations")
        ]
        .map { name, href, label in "<a href=\"\(href)\"\(name == page ? " aria-current=\"page\"" : "")>\(label)</a>" }.joined()
        let body: String
        switch page {
        case "users": body = usersPage
        case "operations": body = operationsPage
        case "events": body = eventsPage
        case "experiments": body = experimentsPage
        default: body = onboardingPage
        }
        return head(
            page.prefix(1).uppercased() + page.dropFirst(),
            extra: """
                <meta name="csrf-token" content="\(escape(csrfToken))">
                <meta name="step-labels" content="\(escape(labels))">
                <script src="/dashboard/dashboard.js" defer></script>
                """) + """
                <body data-page="\(escape(page))">
                <header>
                <strong>onboard</strong>
                <nav>\(links)</nav>
                <form method="post" action="/dashboard/sign-out"><input type="hidden" name="csrf_token" value="\(escape(csrfToken))"><button type="submit">Sign out</button></form>
                </header>
                <main>
                <p id="status" role="status"></p>
                \(body)
                </main>
                </body>
                </html>
                """
    }

    static func section(_ name: String, _ title: String, _ about: String, chart: Bool = true) -> String {
        """
        <section class="card" data-table="\(name)">
        <h2>\(title)</h2>
        <p class="about">\(about)</p>
        \(chart ? "<div class=\"chart\"></div>" : "")
        <details\(chart ? "" : " open")><summary>Numbers</summary><div class="numbers"></div></details>
        <a class="csv" href="/dashboard/api/onboarding/\(name).csv" download>Download CSV</a>
        </section>
        """
    }

    static let onboardingPage = """
        <h1>Onboarding</h1>
        <form id="filters" class="filters">
        <label>Signed up from <input type="date" name="from"></label>
        <label>before <input type="date" name="to"></label>
        <label>Cohort <select name="cohort"><option value="all">everyone</option><option value="day">by sign-up day</option><option value="week">by sign-up week</option><option value="provider">by provider</option></select></label>
        <label>Stuck after (hours) <input type="number" name="stuck_hours" value="24" min="1" max="8760"></label>
        <button type="submit">Show</button>
        </form>
        <section class="card" id="metrics">
        <h2>Success metrics</h2>
        <p class="about">The onboarding's targets, for the people who signed up in the window (without dates: the last 30 days): completion, drop-off and time to complete from the server's own history; account creation, errors and skips from the app's events in the window.</p>
        <div class="kpi-box"></div>
        </section>
        <section class="card" id="kpis">
        <h2>At a glance</h2>
        <p class="about">Everyone who signed up in the window (without dates: the last 30 days), against the window of the same length before it.</p>
        <div class="kpi-box"></div>
        </section>
        <section class="card" id="trend">
        <h2>Sign-ups and completions per day</h2>
        <p class="about">Sign-ups per day (UTC) and the onboardings completed that day.</p>
        <div class="chart"></div>
        </section>
        \(section("funnel", "Funnel", "Users who reached each step (their furthest step is this one or later), as a share of the first step."))
        \(section("drop_off", "Drop-off per step", "Users at each step now, and those who have been there longer than the stuck threshold."))
        \(section("stuck_users", "Stuck users", "Who has been at a step (not complete) longer than the stuck threshold, the longest first (at most 100).", chart: false))
        \(section("step_durations", "Time per step", "Median time spent on a step, over the visits that ended (the 90th percentile in the numbers)."))
        \(section("daily_completion", "Completion rate per day", "Of the users who signed up that day (UTC), the share who have completed onboarding. Without dates: the last 30 days."))
        \(section("time_to_completion", "Time to completion", "From the profile's creation to completion, over the users who completed.", chart: false))
        \(section("state_counts", "Current state", "Users per current onboarding state.", chart: false))
        \(section("children_per_completed_user", "Children per completed user", "Children created by users who completed onboarding.", chart: false))
        \(section("anonymous_upgrades", "Anonymous upgrades", "Users who signed up anonymously, and how many added an e-mail since.", chart: false))
        """

    static let usersPage = """
        <h1>Users</h1>
        <form id="search" class="filters">
        <label>E-mail or id <input type="search" name="q" placeholder="ada@example.com or a user id" size="40"></label>
        <button type="submit">Search</button>
        </form>
        <section class="card"><div id="results"></div></section>
        <section class="card" id="user" hidden>
        <h2 id="user-title"></h2>
        <div class="grid">
        <div><h3>Account</h3><div id="user-account"></div></div>
        <div><h3>Onboarding profile</h3><div id="user-profile"></div></div>
        </div>
        <h3>Children</h3><div id="user-children"></div>
        <h3>Sign-in providers</h3><div id="user-providers"></div>
        <h3>Sessions</h3><div id="user-sessions"></div>
        <div class="danger">
        <button type="button" id="delete-start" class="danger-button">Delete user…</button>
        <div id="delete-confirm" hidden>
        <p>Delete <strong id="delete-name"></strong> permanently? Their profile, children, sessions and onboarding history are deleted with them. This cannot be undone.</p>
        <button type="button" id="delete-yes" class="danger-button">Yes, delete this user</button>
        <button type="button" id="delete-no">Cancel</button>
        </div>
        </div>
        </section>
        """

    static let operationsPage = """
        <h1>Operations</h1>
        <p class="about">Refreshed every 5 seconds. Counters are this process's since it started; p50 and p99 are estimated from the latency histogram's buckets (1 ms … 5 s), as Prometheus's histogram_quantile does. The pool's connections_open counts the pipelined connections (REST answered on the I/O thread) too.</p>
        <div class="grid">
        <section class="card"><h2>Database pool</h2><div id="ops-pool"></div></section>
        <section class="card"><h2>Realtime</h2><div id="ops-realtime"></div></section>
        </div>
        <section class="card"><h2>Requests by route</h2><div id="ops-routes"></div></section>
        <section class="card"><h2>Migrations</h2><div id="ops-migrations"></div></section>
        """

    static let eventsPage = """
        <h1>Events</h1>
        <form id="events-filters" class="filters">
        <label>From <input type="date" name="from"></label>
        <label>before <input type="date" name="to"></label>
        <label>Event <select name="event"></select></label>
        <label>Break down by <select name="breakdown"></select></label>
        <button type="submit">Show</button>
        </form>
        <p class="about" id="events-total"></p>
        <section class="card" id="events-trend"><h2>Per day</h2><p class="about">Events per UTC day (without dates: the last 30 days).</p><div class="chart"></div></section>
        <section class="card" id="events-breakdown"><h2 id="breakdown-title">By property</h2><p class="about">The 20 most frequent values of the property, with the share of the events and the people who sent them.</p><div class="chart"></div></section>
        <section class="card" id="events-top"><h2>Top events</h2><p class="about">The 20 most frequent events in the window; pick one to chart it.</p><div class="chart"></div></section>
        """

    static let experimentsPage = """
        <h1>Experiments</h1>
        <form id="experiments-filters" class="filters">
        <label>Goal <select name="goal"></select></label>
        <label>Within (days of the first exposure) <input type="number" name="days" value="14" min="1" max="365"></label>
        <button type="submit">Show</button>
        </form>
        <p class="about">Every flag with variants. The numbers are the report endpoint's (GET /analytics/v1/experiments/&lt;flag&gt;): each person counted once, in the variant of their first exposure; 95% Wilson intervals; a two-sided two-proportion z-test against the control; a sample-ratio mismatch is a chi-square test of the exposures against the weights at p &lt; 0.001.</p>
        <div id="experiments"></div>
        """
}
