import Dispatch
import Foundation
import HTTP
import Identity
import Postgres
import REST

/// One Realtime WebSocket: the Phoenix channels protocol for `postgres_changes`, Broadcast and
/// Presence. Every message,
/// delivery and timer runs on the socket's serial queue, which owns `channels`; the epoll thread
/// only hands frames over, and the change feed only enqueues deliveries.
final class RealtimeSocket: WebSocketDelegate, @unchecked Sendable {  // state confined to `queue`
    static let maxChannels = 100

    struct Channel {
        var joinRef: String?
        var caller: Caller
        var token: String
        var expiry: DispatchWorkItem?
        /// Broadcast and presence: the topic's key, the join's config and, for a private
        /// channel, what the caller's policies allow.
        var key: TopicKey
        var selfBroadcast = false
        var ack = false
        var presenceEnabled = false
        var presenceKey = ""
        var policies: TopicPolicies? = nil
        /// This channel's tracked presence.
        var presence: PresenceEntry? = nil
        var presenceJSON: String? = nil
    }

    let service: RealtimeService
    let serializer: PhoenixSerializer
    /// The key the socket connected with: the join token when a join carries none.
    let socketToken: String
    let queue = DispatchQueue(label: "onboard.realtime.socket")
    private var webSocket: WebSocket?
    var channels: [String: Channel] = [:]
    /// Broadcast and presence messages in the current one-second window.
    var eventWindow = (start: 0.0, count: 0)

    init(service: RealtimeService, serializer: PhoenixSerializer, socketToken: String) {
        self.service = service
        self.serializer = serializer
        self.socketToken = socketToken
    }

    // MARK: WebSocketDelegate (called on the server's threads)

    func webSocketOpened(_ socket: WebSocket) {
        queue.async { self.webSocket = socket }
        service.register(self)
    }

    func webSocket(_ socket: WebSocket, received message: WebSocketMessage) {
        queue.async {
            switch message {
            case .text(let text): self.handle(text)
            case .binary(let bytes): self.handle(binary: bytes)
            }
        }
    }

    func webSocketClosed(_ socket: WebSocket, code: WebSocketCloseCode) {
        service.unregister(self)
        queue.async {
            for topic in Array(self.channels.keys) { self.drop(topic) }
            self.webSocket = nil
        }
    }

    /// At shutdown: every channel's presence leaves (on this socket's queue, waited for).
    func untrackAll() {
        queue.sync {
            for (topic, channel) in channels {
                guard let presence = channel.presence else { continue }
                channels[topic]?.presence = nil
                service.untrack(channel.key, [presence])
            }
        }
    }

    /// A broadcast or presence message for `topic`, sent while the join it was meant for is current.
    func deliver(topic: String, joinRef: String?, event: String, payloadJSON: String) {
        queue.async {
            guard let channel = self.channels[topic], channel.joinRef == joinRef else { return }
            self.push(nil, nil, topic, event, payloadJSON)
        }
    }

    /// A user broadcast (a binary push of protocol 2.0.0) for `topic`, while the join is
    /// current: a 2.0.0 socket gets it as a binary user broadcast; a 1.0.0 one as a JSON
    /// broadcast when its payload is JSON, and not at all when it is bytes (as Realtime).
    func deliver(topic: String, joinRef: String?, userEvent: String, payload: [UInt8], isJSON: Bool) {
        queue.async {
            guard let channel = self.channels[topic], channel.joinRef == joinRef else { return }
            switch self.serializer {
            case .v2:
                if let frame = BinaryFrame.userBroadcast(topic: topic, event: userEvent, payload: payload, isJSON: isJSON) {
                    self.webSocket?.send(binary: frame)
                }
            case .v1:
                guard isJSON else { return }
                let json = String(decoding: payload, as: UTF8.self)
                self.push(nil, nil, topic, "broadcast", #"{"type":"broadcast","event":\#(jsonString(userEvent)),"payload":\#(json)}"#)
            }
        }
    }

    /// Closes the socket from outside (feed lost, server stopping).
    func close(_ code: WebSocketCloseCode, reason: String) {
        queue.async { self.webSocket?.close(code, reason: reason) }
    }

    /// A change for `topic`, sent only while the join it was matched for is still current.
    func deliver(topic: String, joinRef: String?, ids: [Int], dataJSON: String) {
        queue.async {
            guard let channel = self.channels[topic], channel.joinRef == joinRef else { return }
            let payload = #"{"ids":[\#(ids.map(String.init).joined(separator: ","))],"data":\#(dataJSON)}"#
            self.push(nil, nil, topic, "postgres_changes", payload)
        }
    }

    // MARK: messages (on `queue`)

    private func handle(_ text: String) {
        guard let message = serializer.decode(text) else {
            webSocket?.close(.unsupportedData, reason: "not a Phoenix \(serializer.rawValue) message")
            return
        }
        switch message.event {
        case "heartbeat" where message.topic == "phoenix":
            reply(message, status: "ok", response: "{}")
        case "phx_join":
            join(message)
        case "access_token" where channels[message.topic] != nil:
            refreshToken(message)
        case "phx_leave" where channels[message.topic] != nil:
            leave(message)
        case "broadcast" where channels[message.topic] != nil:
            if countEvent(message.topic) { broadcast(message) }
        case "presence" where channels[message.topic] != nil:
            if countEvent(message.topic) { presence(message) }
        default:
            if channels[message.topic] == nil {
                reply(message, status: "error", response: #"{"reason":"unmatched topic"}"#)
            }
        // Anything else on a joined channel is ignored, as Realtime does.
        }
    }

    private func join(_ message: PhoenixMessage) {
        guard let admitted = admit(message) else { return }
        let (name, token, authorization) = admitted
        // A private channel: the caller's read policies on realtime.messages decide the join.
        let key = TopicKey(name: name, isPrivate: message.payload.isPrivate)
        if service.config.privateOnly && !key.isPrivate {
            reply(message, status: "error", response: #"{"reason":"PrivateOnly: This project only allows private channels"}"#)
            return
        }
        var policies: TopicPolicies? = nil
        if key.isPrivate {
            guard let granted = readPolicies(message, name: name, caller: authorization.caller) else { return }
            policies = granted
        }
        guard let bindings = parseBindings(message) else { return }
        guard let replayed = replayFrames(message, key: key, caller: authorization.caller, policies: policies) else { return }

        // A subscription is only as good as the change feed under it: right after start (or while
        // it reconnects) a change committed now would be announced to nobody. Wait for it.
        if !bindings.isEmpty && !service.waitForFeed(timeout: service.config.feedWait) {
            reply(message, status: "error", response: #"{"reason":"RealtimeNotReady: the change feed is not listening yet, try again"}"#)
            return
        }

        let (channel, resolved) = openChannel(message, key: key, token: token, authorization: authorization, policies: policies, bindings: bindings)
        // Stored broadcasts asked for, to this channel only, after its reply.
        for frame in replayed { push(nil, nil, message.topic, "broadcast", frame) }
        guard !bindings.isEmpty else { return }
        confirm(message, joinRef: channel.joinRef, subscriptions: resolved.subscriptions, problem: resolved.problem, bindings: bindings)
    }

    /// A join's topic name, token and caller; nil (after the error reply) for a topic that is not
    /// Realtime's, too many channels or a refused token. A second join of a topic closes the first.
    private func admit(_ message: PhoenixMessage) -> (name: String, token: String, authorization: RealtimeService.Authorization)? {
        guard message.topic.hasPrefix("realtime:") else {
            reply(message, status: "error", response: #"{"reason":"unmatched topic"}"#)
            return nil
        }
        let name = String(message.topic.dropFirst("realtime:".count))
        guard !name.isEmpty else {
            reply(message, status: "error", response: #"{"reason":"TopicNameRequired: You must provide a topic name"}"#)
            return nil
        }
        if let previous = channels[message.topic] {
            // Phoenix: a second join of a topic closes the first.
            drop(message.topic)
            push(previous.joinRef, previous.joinRef, message.topic, "phx_close", "{}")
        }
        guard channels.count < Self.maxChannels else {
            reply(message, status: "error", response: #"{"reason":"ChannelRateLimitReached: Too many channels"}"#)
            return nil
        }
        let token = message.payload.accessToken ?? message.payload.userToken ?? socketToken
        let authorization: RealtimeService.Authorization
        switch service.authorize(token) {
        case .failure(let refusal):
            reply(message, status: "error", response: #"{"reason":\#(jsonString(refusal.reason))}"#)
            return nil
        case .success(let granted):
            authorization = granted
        }
        return (name, token, authorization)
    }

    /// What a private channel's caller may read; nil (after the error reply) when neither broadcast
    /// nor presence.
    private func readPolicies(_ message: PhoenixMessage, name: String, caller: Caller) -> TopicPolicies? {
        var granted = (try? service.readPolicies(topic: name, caller: caller)) ?? TopicPolicies()
        if !message.payload.presenceEnabled { granted.readsPresence = false }
        guard granted.readsBroadcast || granted.readsPresence else {
            let reason = "Unauthorized: You do not have permissions to read from this Channel topic: \(name)"
            reply(message, status: "error", response: #"{"reason":\#(jsonString(reason))}"#)
            return nil
        }
        return granted
    }

    /// The join's `postgres_changes` bindings; nil (after the error reply) for an invalid entry.
    private func parseBindings(_ message: PhoenixMessage) -> [Binding]? {
        var bindings: [Binding] = []
        for entry in message.payload.postgresChanges {
            guard let binding = Binding(entry) else {
                reply(message, status: "error", response: #"{"reason":\#(jsonString("Invalid postgres_changes entry: " + JWT.serialize(entry.value)))}"#)
                return nil
            }
            bindings.append(binding)
        }
        return bindings
    }

    /// Registers the channel first (with the WAL feed, from the database's current snapshot: what it had
    /// committed is not sent, the client reads it after the reply; with the trigger feed,
    /// holding a lease on the tables so the triggers announce their changes), then replies:
    /// supabase-swift counts as subscribed from the reply on, and a change committed after
    /// it is never missed; none is sent before it (deliveries run on this queue, after the
    /// join). Then the presence state, where presence is read.
    private func openChannel(
        _ message: PhoenixMessage, key: TopicKey, token: String, authorization: RealtimeService.Authorization, policies: TopicPolicies?,
        bindings: [Binding]
    ) -> (channel: Channel, resolved: (subscriptions: [Subscription], problem: String?)) {
        let name = key.name
        var channel = Channel(joinRef: message.joinRef ?? message.ref, caller: authorization.caller, token: token, key: key)
        channel.selfBroadcast = message.payload.broadcastSelf
        channel.ack = message.payload.broadcastAck
        channel.presenceEnabled = message.payload.presenceEnabled
        channel.presenceKey = message.payload.presenceKey.flatMap { $0.isEmpty ? nil : $0 } ?? UUID().uuidString.lowercased()
        channel.policies = policies
        let since = bindings.isEmpty ? nil : service.subscriptionSnapshot()
        let resolved = service.resolve(bindings, socket: self, topic: message.topic, joinRef: channel.joinRef, caller: authorization.caller, since: since)
        service.hub.add(resolved.subscriptions)
        service.logLeaseFailure { try service.addLeases(for: resolved.subscriptions) }
        channel.expiry = scheduleExpiry(topic: message.topic, joinRef: channel.joinRef, at: authorization.expiresAt)
        channels[message.topic] = channel
        let echoed = bindings.map { binding in
            String(binding.echoJSON.dropLast()) + (binding.echoJSON.count > 2 ? "," : "") + #""id":\#(binding.id)}"#
        }
        service.topics.add(key, member(channel))
        reply(message, status: "ok", response: #"{"postgres_changes":[\#(echoed.joined(separator: ","))]}"#)
        if channel.presenceEnabled && (policies?.readsPresence ?? true) {
            do {
                push(channel.joinRef, nil, message.topic, "presence_state", try service.presenceState(key))
            } catch {
                service.logger.error("realtime: could not read the presence state", metadata: ["topic": "\(name)", "error": "\(logText(error))"])
            }
        }
        return (channel, resolved)
    }

    /// Confirms each binding with the database, as the subscriber, and tells the client with a
    /// `system` message; on a problem the channel's subscriptions are removed.
    private func confirm(_ message: PhoenixMessage, joinRef: String?, subscriptions: [Subscription], problem: String?, bindings: [Binding]) {
        var problem = problem
        if problem == nil {
            problem = service.confirm(subscriptions, bindings: bindings)
        }
        if let problem {
            service.hub.remove(socket: self, topic: message.topic)
            systemMessage(topic: message.topic, joinRef: joinRef, extension: "postgres_changes", status: "error", message: problem)
        } else {
            systemMessage(topic: message.topic, joinRef: joinRef, extension: "postgres_changes", status: "ok", message: "Subscribed to PostgreSQL")
        }
    }

    /// `access_token`: re-verify, swap the claims every subscription is re-read with; a bad or
    /// expired token ends the channel (Realtime's `system` error, then `phx_close`).
    private func refreshToken(_ message: PhoenixMessage) {
        guard var channel = channels[message.topic],
            let token = message.payload.accessToken, !token.hasPrefix("sb_"), token != channel.token
        else { return }
        switch service.authorize(token) {
        case .failure(let refusal):
            kick(message.topic, reason: refusal.message)
        case .success(let granted):
            // A private channel: the new token's policies again (Realtime: reading revoked
            // ends the channel; writing is asked again at the next send).
            if let previous = channel.policies {
                var policies = (try? service.readPolicies(topic: channel.key.name, caller: granted.caller)) ?? TopicPolicies()
                if !channel.presenceEnabled { policies.readsPresence = false }
                if (previous.readsBroadcast && !policies.readsBroadcast) || (previous.readsPresence && !policies.readsPresence)
                    || !(policies.readsBroadcast || policies.readsPresence)
                {
                    kick(message.topic, reason: "You no longer have permission to read from this Channel topic: \(channel.key.name)")
                    return
                }
                channel.policies = policies
            }
            channel.expiry?.cancel()
            channel.token = token
            channel.caller = granted.caller
            channel.expiry = scheduleExpiry(topic: message.topic, joinRef: channel.joinRef, at: granted.expiresAt)
            channels[message.topic] = channel
            service.hub.replaceCaller(socket: self, topic: message.topic, caller: granted.caller)
            service.topics.add(channel.key, member(channel))
        }
    }

    private func leave(_ message: PhoenixMessage) {
        guard let channel = channels[message.topic] else { return }
        drop(message.topic)
        reply(message, status: "ok", response: "{}")
        push(channel.joinRef, channel.joinRef, message.topic, "phx_close", "{}")
    }

    private func scheduleExpiry(topic: String, joinRef: String?, at expiresAt: Double?) -> DispatchWorkItem? {
        guard let expiresAt else { return nil }
        let item = DispatchWorkItem { [weak self] in
            guard let self, self.channels[topic]?.joinRef == joinRef else { return }
            let ago = RealtimeService.wholeSeconds(Date().timeIntervalSince1970 - expiresAt)
            self.kick(topic, reason: "Token has expired \(ago) seconds ago")
        }
        let delay = expiresAt - Date().timeIntervalSince1970  // `exp` is any JSON number: bound it
        queue.asyncAfter(deadline: .now() + (delay.isFinite ? min(max(0, delay), 1e9) : 0), execute: item)
        return item
    }

    /// Realtime's `shutdown_response`: a system error, then the channel closes.
    func kick(_ topic: String, reason: String) {
        guard let channel = channels[topic] else { return }
        drop(topic)
        systemMessage(topic: topic, joinRef: channel.joinRef, extension: "system", status: "error", message: reason)
        push(channel.joinRef, channel.joinRef, topic, "phx_close", "{}")
    }

    private func drop(_ topic: String) {
        guard let channel = channels[topic] else { return }
        channel.expiry?.cancel()
        channels[topic] = nil
        service.hub.remove(socket: self, topic: topic)
        service.topics.remove(channel.key, socket: self)
        if let presence = channel.presence { service.untrack(channel.key, [presence]) }
    }

    private func member(_ channel: Channel) -> Member {
        Member(
            socket: self, joinRef: channel.joinRef, selfBroadcast: channel.selfBroadcast,
            readsBroadcast: channel.policies?.readsBroadcast ?? true, readsPresence: channel.policies?.readsPresence ?? true)
    }

    // MARK: output

    func reply(_ message: PhoenixMessage, status: String, response: String) {
        push(message.joinRef, message.ref, message.topic, "phx_reply", #"{"status":\#(jsonString(status)),"response":\#(response)}"#)
    }

    private func systemMessage(topic: String, joinRef: String?, extension name: String, status: String, message: String) {
        let channel = String(topic.dropFirst("realtime:".count))
        let payload = #"{"channel":\#(jsonString(channel)),"extension":\#(jsonString(name)),"message":\#(jsonString(message)),"status":\#(jsonString(status))}"#
        push(joinRef, nil, topic, "system", payload)
    }

    func push(_ joinRef: String?, _ ref: String?, _ topic: String, _ event: String, _ payloadJSON: String) {
        webSocket?.send(text: serializer.encode(joinRef: joinRef, ref: ref, topic: topic, event: event, payloadJSON: payloadJSON))
    }
}
