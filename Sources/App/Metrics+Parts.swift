import Auth
import Foundation

/// The metrics of the parts beside the request counts: the pool, the pipelined connections, mail,
/// Auth's hooks and Realtime.
extension Metrics {
    /// The pool's connections, size and waiters.
    func poolText() -> String {
        var out = ""
        let poolStats = pool.stats
        out += "# HELP onboard_db_pool_connections Database connections of the pool, by state.\n"
        out += "# TYPE onboard_db_pool_connections gauge\n"
        out += "onboard_db_pool_connections{state=\"in_use\"} \(poolStats.inUse)\n"
        out += "onboard_db_pool_connections{state=\"idle\"} \(poolStats.open - poolStats.inUse)\n"
        out += "# HELP onboard_db_pool_size Configured maximum of pool connections.\n"
        out += "# TYPE onboard_db_pool_size gauge\n"
        out += "onboard_db_pool_size \(pool.size)\n"
        out += "# HELP onboard_db_pool_waiting Requests waiting for a pool connection.\n"
        out += "# TYPE onboard_db_pool_waiting gauge\n"
        out += "onboard_db_pool_waiting \(poolStats.waiting)\n"
        return out
    }

    /// The pipelined connections (none without them).
    func pipelineText() -> String {
        var out = ""
        // The primary's general connections (writes; reads too when they have none of their own),
        // then its connections for reads.
        let general = readPipeline == nil ? "REST requests" : "REST requests other than reads"
        for (client, kind, what) in [(pipeline, "", general), (readPipeline, "_read", "REST reads")] {
            guard let stats = client?.stats else { continue }
            out += "# HELP onboard_db_pipeline\(kind)_connections Pipelined connections open for \(what) (answered on the I/O thread).\n"
            out += "# TYPE onboard_db_pipeline\(kind)_connections gauge\n"
            out += "onboard_db_pipeline\(kind)_connections \(stats.open)\n"
            out += "# HELP onboard_db_pipeline\(kind)_exchanges_total \(what) answered over these pipelined connections.\n"
            out += "# TYPE onboard_db_pipeline\(kind)_exchanges_total counter\n"
            out += "onboard_db_pipeline\(kind)_exchanges_total \(stats.exchanges)\n"
            out += "# HELP onboard_db_pipeline\(kind)_declined_total \(what) left to a worker because none of these connections was free.\n"
            out += "# TYPE onboard_db_pipeline\(kind)_declined_total counter\n"
            out += "onboard_db_pipeline\(kind)_declined_total \(stats.declined)\n"
        }
        return out
    }

    /// The mail flows' deliveries and the shared outbox (none without a mailer).
    func mailText() -> String {
        var out = ""
        if let mailer {
            let stats = mailer.stats
            out +=
                "# HELP onboard_mail_total Mails of the Auth flows this process delivered, by outcome: sent (accepted by the SMTP server), logged (no SMTP_HOST: written to the log), failed (given up after retries).\n"
            out += "# TYPE onboard_mail_total counter\n"
            for (result, count) in [("failed", stats.failed), ("logged", stats.logged), ("sent", stats.sent)] {
                out += "onboard_mail_total{result=\"\(result)\"} \(count)\n"
            }
            out += "# HELP onboard_mail_retries_total Delivery attempts of this process that failed transiently and were scheduled again.\n"
            out += "# TYPE onboard_mail_retries_total counter\n"
            out += "onboard_mail_retries_total \(stats.retried)\n"
            // The outbox is shared by every server: its depth is the database's.
            if let depth = try? adminPool.withConnection({ try Mailer.depth($0) }) {
                out += "# HELP onboard_mail_queue Mails of the outbox waiting for delivery (every server's), retries included.\n"
                out += "# TYPE onboard_mail_queue gauge\n"
                out += "onboard_mail_queue \(depth.pending)\n"
                out += "# HELP onboard_mail_outbox Rows of the mail outbox by status (finished rows are kept for a while).\n"
                out += "# TYPE onboard_mail_outbox gauge\n"
                for (status, count) in [("failed", depth.failed), ("logged", depth.logged), ("pending", depth.pending), ("sent", depth.sent)] {
                    out += "onboard_mail_outbox{status=\"\(status)\"} \(count)\n"
                }
            }
        }
        return out
    }

    /// Realtime's sockets, subscriptions and change feed (none without Realtime).
    func realtimeText() -> String {
        var out = ""
        if let realtime, let feed {
            out += "# HELP onboard_realtime_sockets Open Realtime WebSockets.\n"
            out += "# TYPE onboard_realtime_sockets gauge\n"
            out += "onboard_realtime_sockets \(realtime.socketCount)\n"
            out += "# HELP onboard_realtime_subscriptions postgres_changes bindings currently subscribed.\n"
            out += "# TYPE onboard_realtime_subscriptions gauge\n"
            out += "onboard_realtime_subscriptions \(realtime.subscriptionCount)\n"
            out += "# HELP onboard_realtime_events_total postgres_changes events sent to channels.\n"
            out += "# TYPE onboard_realtime_events_total counter\n"
            out += "onboard_realtime_events_total \(feed.deliveredCount)\n"
            out += "# HELP onboard_realtime_feed_listening 1 while the change feed's connection is up (the WAL stream, or the triggers' LISTEN).\n"
            out += "# TYPE onboard_realtime_feed_listening gauge\n"
            out += "onboard_realtime_feed_listening \(feed.isListening ? 1 : 0)\n"
            out += "# HELP onboard_realtime_feed The change feed this process runs (1 for its kind).\n"
            out += "# TYPE onboard_realtime_feed gauge\n"
            out += "onboard_realtime_feed{kind=\"wal\"} \(feed.kind == .wal ? 1 : 0)\n"
            out += "onboard_realtime_feed{kind=\"triggers\"} \(feed.kind == .triggers ? 1 : 0)\n"
        }
        return out
    }

    /// Auth's hook calls by hook and result (none before the first call).
    func hooksText() -> String {
        guard let calls = hookCalls?.counts, !calls.isEmpty else { return "" }
        var out = "# HELP onboard_auth_hook_calls_total Auth hook calls, by hook and result (ok: answered; error: refused by the hook, failed or timed out).\n"
        out += "# TYPE onboard_auth_hook_calls_total counter\n"
        for (key, count) in calls.sorted(by: { ($0.key.hook, $0.key.result) < ($1.key.hook, $1.key.result) }) {
            out += "onboard_auth_hook_calls_total{hook=\(Self.label(key.hook)),result=\(Self.label(key.result))} \(count)\n"
        }
        return out
    }
}
