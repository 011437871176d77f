import App
import Foundation
import Postgres
import TestSupport
import Testing

/// What realtime-js and supabase-swift decode from a 2.0.0 socket's binary frame.
struct UserBroadcastFrame: Equatable {
    var topic: String
    var event: String
    var metadata: String
    var payload: [UInt8]
    var isJSON: Bool
}

extension PhoenixClient {
    /// realtime-js's `_encodeUserBroadcastPush`, byte for byte: kind 3, the lengths of join
    /// ref, ref, topic, user event and metadata, the payload's encoding (1 JSON, 0 binary), the
    /// fields, then the payload.
    static func userBroadcastPush(joinRef: String, ref: String, topic: String, event: String, metadata: String = "", payload: [UInt8], json: Bool) -> [UInt8] {
        let fields = [joinRef, ref, topic, event, metadata].map { Array($0.utf8) }
        return [3] + fields.map { UInt8($0.count) } + [json ? 1 : 0] + fields.flatMap { $0 } + payload
    }

    func sendUserBroadcast(_ topic: String, joinRef: String, ref: String = "b1", event: String, payload: [UInt8], json: Bool) throws {
        try socket.send(opcode: 0x2, Self.userBroadcastPush(joinRef: joinRef, ref: ref, topic: topic, event: event, payload: payload, json: json))
    }

    /// realtime-js's `_decodeUserBroadcast` of the next binary frame (text frames skipped).
    func nextUserBroadcast(timeout: Double = 30) throws -> UserBroadcastFrame? {
        let deadline = Date().addingTimeInterval(timeout)
        while let frame = try socket.readFrame(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            if frame.opcode == 0x8 { return nil }
            guard frame.opcode == 0x2 else { continue }
            let bytes = frame.payload
            guard bytes.count >= 5, bytes[0] == 4 else { return nil }
            let sizes = (Int(bytes[1]), Int(bytes[2]), Int(bytes[3]))
            var offset = 5
            func take(_ count: Int) -> [UInt8] {
                defer { offset += count }
                return Array(bytes[offset..<offset + count])
            }
            let topic = String(decoding: take(sizes.0), as: UTF8.self)
            let event = String(decoding: take(sizes.1), as: UTF8.self)
            let metadata = String(decoding: take(sizes.2), as: UTF8.self)
            return UserBroadcastFrame(topic: topic, event: event, metadata: metadata, payload: Array(bytes[offset...]), isJSON: bytes[4] == 1)
        }
        return nil
    }
}

/// Broadcast in protocol 2.0.0's binary frames, as supabase-swift and supabase-js send it, mixed
/// with 1.0.0 clients and across two servers.
@Suite("Realtime: binary broadcasts (protocol 2.0.0)", .serialized)
struct RealtimeBinaryTests {
    let server: TestServer

    init() throws { server = try TestServer() }

    @Test func aJSONUserBroadcastReachesBothProtocols() throws {
        let sender = try PhoenixClient(server)
        let (senderRef, joined) = try sender.joinChannel("realtime:room", token: nil, ack: true)
        #expect(RealtimeBroadcastTests.status(joined) == "ok")
        let modern = try PhoenixClient(server)
        _ = try modern.joinChannel("realtime:room", token: nil)
        let legacy = try PhoenixClient(server, vsn: "1.0.0")
        _ = try legacy.joinChannel("realtime:room", token: nil)

        let payload = Array(#"{"text":"héllo","n":1}"#.utf8)
        try sender.sendUserBroadcast("realtime:room", joinRef: senderRef, ref: "7", event: "message", payload: payload, json: true)
        // ack: the push's ref is answered ok.
        let ack = try #require(try sender.next("phx_reply"))
        #expect(ack.ref == "7" && RealtimeBroadcastTests.status(ack) == "ok")
        let received = try #require(try modern.nextUserBroadcast())
        #expect(received == UserBroadcastFrame(topic: "realtime:room", event: "message", metadata: "", payload: payload, isJSON: true))
        let text = try #require(try legacy.nextBroadcast())
        #expect(text.event == "message" && text.payload["text"] as? String == "héllo" && text.payload["n"] as? Int == 1)
    }

    @Test func aBinaryPayloadReachesTwoPointOhSubscribersOnly() throws {
        let sender = try PhoenixClient(server)
        let (senderRef, _) = try sender.joinChannel("realtime:bytes", token: nil)
        let modern = try PhoenixClient(server)
        _ = try modern.joinChannel("realtime:bytes", token: nil)
        let legacy = try PhoenixClient(server, vsn: "1.0.0")
        _ = try legacy.joinChannel("realtime:bytes", token: nil)

        let bytes: [UInt8] = [0, 1, 2, 0xff, 0xfe, 10, 13]
        try sender.sendUserBroadcast("realtime:bytes", joinRef: senderRef, event: "blob", payload: bytes, json: false)
        #expect(try modern.nextUserBroadcast() == UserBroadcastFrame(topic: "realtime:bytes", event: "blob", metadata: "", payload: bytes, isJSON: false))
        // 1.0.0 cannot carry bytes (Realtime drops them too): its next broadcast is the JSON one after.
        try sender.send("realtime:bytes", joinRef: senderRef, event: "after", ["n": 2])
        #expect(try legacy.nextBroadcast()?.event == "after")
        // A text broadcast reaches a 2.0.0 subscriber as text, as before.
        #expect(try modern.nextBroadcast()?.event == "after")
    }

    @Test func aUserBroadcastCrossesToAnotherServer() throws {
        let replica = try RealtimeBroadcastTests.replica(of: server)
        defer { replica.shutdown() }
        let remote = PhoenixClient(
            socket: try TestWebSocket(port: replica.port, target: "/realtime/v1/websocket?apikey=\(server.anonKey)&vsn=2.0.0"), vsn: "2.0.0")
        _ = try remote.joinChannel("realtime:far", token: nil)
        let remoteLegacy = PhoenixClient(
            socket: try TestWebSocket(port: replica.port, target: "/realtime/v1/websocket?apikey=\(server.anonKey)&vsn=1.0.0"), vsn: "1.0.0")
        _ = try remoteLegacy.joinChannel("realtime:far", token: nil)
        let sender = try PhoenixClient(server)
        let (senderRef, _) = try sender.joinChannel("realtime:far", token: nil)
        let json = Array(#"{"far":true}"#.utf8)
        let bytes: [UInt8] = Array(0...255)
        // The replica's listener may join the feed a moment after its channel: retried.
        var got: UserBroadcastFrame?
        #expect(
            try eventually {
                try sender.sendUserBroadcast("realtime:far", joinRef: senderRef, event: "json", payload: json, json: true)
                got = try remote.nextUserBroadcast(timeout: 0.5)
                return got != nil
            })
        #expect(got == UserBroadcastFrame(topic: "realtime:far", event: "json", metadata: "", payload: json, isJSON: true))
        #expect(try remoteLegacy.nextBroadcast()?.payload["far"] as? Bool == true)
        try sender.sendUserBroadcast("realtime:far", joinRef: senderRef, event: "bytes", payload: bytes, json: false)
        var frame = try remote.nextUserBroadcast()
        while frame?.event == "json" { frame = try remote.nextUserBroadcast() }
        #expect(frame == UserBroadcastFrame(topic: "realtime:far", event: "bytes", metadata: "", payload: bytes, isJSON: false))
    }

    @Test(arguments: [
        ("kind 9", [UInt8]([9, 0, 0, 0, 0, 0, 1])),
        ("truncated", [UInt8]([3, 1, 1, 200, 1, 0, 1, 0x31, 0x31])),
        (
            "encoding 2",
            PhoenixClient.userBroadcastPush(joinRef: "1", ref: "2", topic: "realtime:x", event: "e", payload: [], json: false).enumerated().map {
                $0.offset == 6 ? 2 : $0.element
            }
        ),
        (
            "JSON that is not",
            PhoenixClient.userBroadcastPush(joinRef: "1", ref: "2", topic: "realtime:x", event: "e", payload: Array("{nope".utf8), json: true)
        ),
        ("empty", [UInt8]())
    ])
    func anUnreadableBinaryMessageClosesTheSocket(_ name: String, _ bytes: [UInt8]) throws {
        let client = try PhoenixClient(server)
        _ = try client.joinChannel("realtime:x", token: nil)
        try client.socket.send(opcode: 0x2, bytes)
        var close: TestWebSocket.Frame?
        while let frame = try client.socket.readFrame(timeout: 10) {
            if frame.opcode == 0x8 {
                close = frame
                break
            }
        }
        #expect(close?.closeCode == 1003, "\(name)")
        // The server goes on.
        #expect(try server.get("/health").status == 200)
    }

    @Test func aBinaryMessageOnAOnePointOhSocketClosesIt() throws {
        let client = try PhoenixClient(server, vsn: "1.0.0")
        try client.socket.send(opcode: 0x2, PhoenixClient.userBroadcastPush(joinRef: "1", ref: "2", topic: "realtime:x", event: "e", payload: [], json: false))
        var code: UInt16?
        while let frame = try client.socket.readFrame(timeout: 10), code == nil { code = frame.closeCode }
        #expect(code == 1003)
    }

    @Test func aPushToATopicNotJoinedIsAnsweredAsRealtimeDoes() throws {
        let client = try PhoenixClient(server)
        try client.sendUserBroadcast("realtime:nowhere", joinRef: "1", ref: "5", event: "e", payload: Array("{}".utf8), json: true)
        let reply = try #require(try client.next("phx_reply"))
        #expect(reply.ref == "5" && RealtimeBroadcastTests.status(reply) == "error" && RealtimeBroadcastTests.reason(reply) == "unmatched topic")
    }
}
