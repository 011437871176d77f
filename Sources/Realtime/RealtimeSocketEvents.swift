import Foundation
import Identity
import Postgres

/// Broadcast and presence messages of one socket, on its queue: the per-second limit, the write
/// policies of a private channel, `broadcast` fan-out and presence `track`/`untrack`.
extension RealtimeSocket {
    /// Counts one broadcast or presence message of the socket; past the limit the channel is
    /// closed as Realtime closes it, and false is returned.
    func countEvent(_ topic: String) -> Bool {
        let now = Date().timeIntervalSince1970
        if now - eventWindow.start >= 1 { eventWindow = (now, 0) }
        eventWindow.count += 1
        guard eventWindow.count <= service.config.maxEventsPerSecond else {
            kick(topic, reason: "Too many messages per second")
            return false
        }
        return true
    }

    /// Whether the caller may write `name` (`broadcast`, `presence`) on a private channel,
    /// asked once per token.
    func mayWrite(_ topic: String, _ name: String) -> Bool {
        guard var channel = channels[topic], var policies = channel.policies else { return true }
        let known = name == "broadcast" ? policies.writesBroadcast : policies.writesPresence
        if let known { return known }
        let allowed: Bool
        do {
            allowed = try service.mayWrite(topic: channel.key.name, extension: name, caller: channel.caller)
        } catch {
            service.logger.error("realtime: could not check a write policy", metadata: ["topic": "\(channel.key.name)", "error": "\(logText(error))"])
            return false
        }
        if name == "broadcast" { policies.writesBroadcast = allowed } else { policies.writesPresence = allowed }
        channel.policies = policies
        channels[topic] = channel
        return allowed
    }

    /// A binary message: protocol 2.0.0's user broadcast push, then as a `broadcast`. A 1.0.0
    /// socket has no binary messages, and one that cannot be read closes the socket (Realtime's
    /// serializer fails on it too).
    func handle(binary bytes: [UInt8]) {
        guard serializer == .v2 else {
            close(.unsupportedData, reason: "binary messages need protocol 2.0.0")
            return
        }
        let push: BinaryFrame.Push
        do {
            push = try BinaryFrame.decodePush(bytes)
        } catch {
            close(.unsupportedData, reason: error.description)
            return
        }
        let message = PhoenixMessage(
            joinRef: push.joinRef.isEmpty ? nil : push.joinRef, ref: push.ref.isEmpty ? nil : push.ref, topic: push.topic, event: "broadcast",
            payload: PhoenixPayload())
        guard channels[push.topic] != nil else {
            reply(message, status: "error", response: #"{"reason":"unmatched topic"}"#)
            return
        }
        if countEvent(push.topic) { broadcast(message, event: push.event, payload: .user(bytes: push.payload, isJSON: push.isJSON)) }
    }

    /// `broadcast` as a text push: its `event` and JSON `payload`.
    func broadcast(_ message: PhoenixMessage) {
        let payloadJSON = message.payload.payload.map { JWT.serialize($0.value) } ?? "null"
        broadcast(message, event: message.payload.event ?? "", payload: .json(payloadJSON))
    }

    /// `broadcast`: to every subscriber of the topic on every server; `ack` answers ok (or
    /// `payload_size_exceeded`). A private channel without the insert policy drops it silently,
    /// as Realtime does.
    func broadcast(_ message: PhoenixMessage, event: String, payload: BroadcastPayload) {
        guard let channel = channels[message.topic], mayWrite(message.topic, "broadcast") else { return }
        let size: Int
        switch payload {
        case .json(let json): size = json.utf8.count
        case .user(let bytes, _): size = bytes.count
        }
        if size > service.config.maxPayloadBytes {
            if channel.ack { reply(message, status: "error", response: #""payload_size_exceeded""#) }
            return
        }
        switch payload {
        case .json(let json): service.broadcast(channel.key, event: event, payloadJSON: json, sender: self)
        case .user(let bytes, let isJSON): service.broadcastUser(channel.key, event: event, payload: bytes, isJSON: isJSON, sender: self)
        }
        if channel.ack { reply(message, status: "ok", response: "{}") }
    }

    /// `presence`: `track` (again: an update) or `untrack`; answered ok, or an error reply.
    func presence(_ message: PhoenixMessage) {
        guard var channel = channels[message.topic] else { return }
        switch message.payload.event {
        case "track":
            guard let meta = message.payload.payload?.value as? [String: Any] else {
                reply(message, status: "error", response: #"{"reason":"Presence track payload must be a map"}"#)
                return
            }
            guard mayWrite(message.topic, "presence") else {
                reply(message, status: "error", response: "{}")
                return
            }
            channel = channels[message.topic] ?? channel
            let metaJSON = JWT.serialize(meta)
            // Each server's notification carries the meta: a larger one does not fit.
            if metaJSON.utf8.count > min(service.config.maxPayloadBytes, RealtimeService.notificationLimit - 500) {
                kick(message.topic, reason: "Track message size exceeded")
                return
            }
            if metaJSON != channel.presenceJSON {
                do {
                    channel.presence = try service.track(channel.key, presenceKey: channel.presenceKey, meta: meta, previous: channel.presence)
                    channel.presenceJSON = metaJSON
                    channels[message.topic] = channel
                } catch {
                    service.logger.error("realtime: could not track a presence", metadata: ["topic": "\(channel.key.name)", "error": "\(logText(error))"])
                    reply(message, status: "error", response: "{}")
                    return
                }
            }
            reply(message, status: "ok", response: "{}")
        case "untrack":
            if let presence = channel.presence {
                channel.presence = nil
                channel.presenceJSON = nil
                channels[message.topic] = channel
                service.untrack(channel.key, [presence])
            }
            reply(message, status: "ok", response: "{}")
        default:
            reply(message, status: "error", response: "{}")
        }
    }
}
