import Foundation
import HTTP
import Identity
import Postgres

extension RealtimeSocket {
    /// The broadcasts a join's `config.broadcast.replay` asks for, as frames; none without it;
    /// nil (after Realtime's error reply) for a public channel, unusable parameters, a caller
    /// who may not read broadcasts of the topic, or a query that failed.
    func replayFrames(_ message: PhoenixMessage, key: TopicKey, caller: Caller, policies: TopicPolicies?) -> [String]? {
        guard let replay = message.payload.replay else { return [] }
        func refuse(_ reason: String) -> [String]? {
            reply(message, status: "error", response: #"{"reason":\#(jsonString(reason))}"#)
            return nil
        }
        guard key.isPrivate else { return refuse("UnableToReplayMessages: Replay is not allowed for public channels") }
        guard let since = replay.since else { return refuse("UnableToReplayMessages: Replay params are not valid") }
        guard policies?.readsBroadcast == true else {
            return refuse("Unauthorized: You do not have permissions to read from this Channel topic: \(key.name)")
        }
        do {
            return try service.storedBroadcasts(topic: key.name, caller: caller, since: since, limit: replay.limit)
        } catch {
            service.logger.error("realtime: could not replay messages", metadata: ["topic": "\(key.name)", "error": "\(logText(error))"])
            return refuse("UnableToReplayMessages: Realtime was unable to replay messages")
        }
    }
}

extension RealtimeService {
    /// Hours a stored broadcast is kept (Realtime drops its daily partitions after 72 hours).
    static let messageRetentionHours = 72
    /// How often each server deletes the older ones.
    static let messageCleanupInterval = 600.0

    /// The private topic's stored broadcasts (realtime.send, broadcast_changes) from `since`
    /// (milliseconds since 1970), the newest `limit`, oldest first, each as a broadcast frame
    /// with `meta` `{replayed: true, id}`. Read as the caller: row-level security on
    /// realtime.messages decides which of them it gets.
    func storedBroadcasts(topic: String, caller: Caller, since: Int64, limit: Int) throws -> [String] {
        let rows = try pool.withConnection { connection -> QueryResult in
            try connection.execute("BEGIN")
            defer { if !connection.isIdle { try? connection.execute("ROLLBACK") } }
            let results = try connection.pipeline([
                claimsSetup(caller, topic: topic),
                """
                SELECT frame FROM (
                  SELECT jsonb_build_object('type', 'broadcast', 'event', event, 'payload', payload,
                           'meta', jsonb_build_object('replayed', true, 'id', id))::text AS frame, inserted_at
                  FROM realtime.messages
                  WHERE topic = \(topic) AND private AND extension = 'broadcast'
                    AND inserted_at >= to_timestamp(\(String(since))::bigint / 1000.0) AT TIME ZONE 'UTC'
                    AND inserted_at < (now() AT TIME ZONE 'UTC') + interval '1 minute'
                  ORDER BY inserted_at DESC LIMIT \(String(limit))::integer) newest
                ORDER BY inserted_at
                """
            ])
            return results[1]
        }
        return (0..<rows.count).compactMap { rows[$0, 0] }
    }

    /// Deletes stored broadcasts older than the retention (every server does, now and then).
    func deleteOldMessages() throws {
        _ = try pool.withConnection { connection in
            try connection.query(
                "DELETE FROM realtime.messages WHERE inserted_at < (now() AT TIME ZONE 'UTC') - make_interval(hours => \(String(Self.messageRetentionHours))::integer)"
            )
        }
    }
}
