import Foundation
import HTTP
import Synchronization
import TestSupport
import Testing

/// Echoes text and binary messages back; records how each connection ended.
final class EchoDelegate: WebSocketDelegate {
    let closes = Mutex<[WebSocketCloseCode]>([])
    let opened = Mutex<[WebSocket]>([])

    func webSocketOpened(_ socket: WebSocket) { opened.withLock { $0.append(socket) } }

    func webSocket(_ socket: WebSocket, received message: WebSocketMessage) {
        switch message {
        case .text(let text): socket.send(text: text)
        case .binary(let bytes): socket.send(text: "binary \(bytes.count)")
        }
    }

    func webSocketClosed(_ socket: WebSocket, code: WebSocketCloseCode) { closes.withLock { $0.append(code) } }
}

/// RFC 6455 on our HTTP server, over real sockets: the handshake, framing rules, limits.
@Suite("WebSockets (RFC 6455)")
struct WebSocketTests {
    static func server(_ configure: (inout ServerLimits) -> Void = { _ in }) throws -> (HTTPServer, EchoDelegate) {
        let delegate = EchoDelegate()
        var limits = ServerLimits()
        limits.webSocket.maxMessageBytes = 64 * 1024
        configure(&limits)
        let server = HTTPServer(port: 0, limits: limits) { request in
            request.path == "/ws" ? WebSocketHandshake.accept(request, delegate: delegate) : .error(.notFound, "Not Found")
        }
        try server.start()
        return (server, delegate)
    }

    @Test func acceptKeyIsTheRFCExample() {
        #expect(WebSocketHandshake.acceptValue(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func handshakeSwitchesProtocolsAndEchoes() throws {
        let (server, _) = try Self.server()
        defer { server.shutdown() }
        let socket = try TestWebSocket(port: server.port, target: "/ws", headers: [("Connection", "keep-alive, Upgrade")])
        #expect(socket.status == 101)
        #expect(socket.header("Upgrade")?.lowercased() == "websocket")
        #expect(socket.header("Connection") == "Upgrade")
        #expect(socket.header("Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(socket.header("Sec-WebSocket-Extensions") == nil && socket.header("Sec-WebSocket-Protocol") == nil)
        try socket.sendText("héllo")
        #expect(try socket.readText() == "héllo")
        // A 70,000-byte message needs the 64-bit length on the way out too... within limits here: 60,000 (16-bit).
        let big = String(repeating: "x", count: 60_000)
        try socket.sendText(big)
        #expect(try socket.readText() == big)
    }

    @Test(
        arguments: [
            ([("Sec-WebSocket-Key", "")], 400),
            ([("Sec-WebSocket-Key", "c2hvcnQ=")], 400),  // 5 bytes, not 16
            ([("Upgrade", "")], 400),
            ([("Connection", "keep-alive")], 400),
            ([("Sec-WebSocket-Version", "8")], 426)
        ] as [([(String, String)], Int)])
    func badHandshakesAreRefused(headers: [(String, String)], status: Int) throws {
        let (server, delegate) = try Self.server()
        defer { server.shutdown() }
        let socket = try TestWebSocket(port: server.port, target: "/ws", headers: headers)
        #expect(socket.status == status)
        if status == 426 { #expect(socket.header("Sec-WebSocket-Version") == "13") }
        #expect(delegate.opened.withLock { $0.isEmpty })
    }

    @Test func unmaskedClientFrameClosesWith1002() throws {
        let (server, delegate) = try Self.server()
        defer { server.shutdown() }
        let socket = try TestWebSocket(port: server.port, target: "/ws")
        try socket.send(opcode: 0x1, Array("hi".utf8), masked: false)
        let frame = try socket.readFrame()
        #expect(frame?.closeCode == 1002)
        #expect(socket.waitForEOF())
        _ = eventually { !delegate.closes.withLock { $0.isEmpty } }
        #expect(delegate.closes.withLock { $0 } == [.protocolError])
    }

    @Test func oversizedFrameClosesWith1009BeforeItArrives() throws {
        let (server, _) = try Self.server()
        defer { server.shutdown() }
        let socket = try TestWebSocket(port: server.port, target: "/ws")
        // Only the header of a 10 MB frame: refused on its length, nothing buffered.
        try socket.sendRaw([0x81, 0xFF, 0, 0, 0, 0, 0, 0x98, 0x96, 0x80, 1, 2, 3, 4])
        #expect(try socket.readFrame()?.closeCode == 1009)
        #expect(socket.waitForEOF())
    }

    @Test func fragmentedMessageIsReassembledAroundAPing() throws {
        let (server, _) = try Self.server()
        defer { server.shutdown() }
        let socket = try TestWebSocket(port: server.port, target: "/ws")
        try socket.send(opcode: 0x1, Array("frag".utf8), fin: false)
        try socket.send(opcode: 0x9, Array("are you there".utf8))
        try socket.send(opcode: 0x0, Array("men".utf8), fin: false)
        try socket.send(opcode: 0x0, Array("ted".utf8))
        let pong = try socket.readFrame()
        #expect(pong?.opcode == 0xA && pong?.text == "are you there")
        #expect(try socket.readText() == "fragmented")
    }

    @Test func fragmentsOverTheMessageLimitClose1009() throws {
        let (server, _) = try Self.server()
        defer { server.shutdown() }
        let socket = try TestWebSocket(port: server.port, target: "/ws")
        let piece = [UInt8](repeating: 0x61, count: 40_000)
        try socket.send(opcode: 0x1, piece, fin: false)
        try socket.send(opcode: 0x0, piece)
        #expect(try socket.readFrame()?.closeCode == 1009)
    }

    @Test(arguments: [
        (TestWebSocket.frame(opcode: 0x0, Array("orphan".utf8)), UInt16(1002)),  // continuation without a start
        (TestWebSocket.frame(opcode: 0x3, []), UInt16(1002)),  // reserved opcode
        (TestWebSocket.frame(opcode: 0x1, Array("x".utf8), rsv: 4), UInt16(1002)),  // RSV1 without an extension
        (TestWebSocket.frame(opcode: 0x9, [UInt8](repeating: 1, count: 126)), UInt16(1002)),  // control frame > 125
        (TestWebSocket.frame(opcode: 0x9, [], fin: false), UInt16(1002)),  // fragmented control frame
        (TestWebSocket.frame(opcode: 0x1, [0xC3, 0x28]), UInt16(1007)),  // invalid UTF-8
        (TestWebSocket.frame(opcode: 0x8, [0x03, 0xED]), UInt16(1002))  // close code 1005 may not be sent
    ])
    func protocolViolationsCloseWithTheirCode(frame: [UInt8], code: UInt16) throws {
        let (server, _) = try Self.server()
        defer { server.shutdown() }
        let socket = try TestWebSocket(port: server.port, target: "/ws")
        try socket.sendRaw(frame)
        #expect(try socket.readFrame()?.closeCode == code)
        #expect(socket.waitForEOF())
    }

    @Test func closeIsAnsweredWithTheSameCodeAndTheServerHangsUp() throws {
        let (server, delegate) = try Self.server()
        defer { server.shutdown() }
        let socket = try TestWebSocket(port: server.port, target: "/ws")
        try socket.sendClose(code: 4001)
        #expect(try socket.readFrame()?.closeCode == 4001)
        #expect(socket.waitForEOF())
        // The descriptor is shut down a moment before the bookkeeping finishes.
        _ = eventually { server.connectionCount == 0 }
        #expect(delegate.closes.withLock { $0 } == [WebSocketCloseCode(rawValue: 4001)])
        #expect(server.connectionCount == 0)
    }

    @Test func idleConnectionsAreClosedWith1000() throws {
        let (server, _) = try Self.server { $0.webSocket.idleTimeout = 1 }
        defer { server.shutdown() }
        let socket = try TestWebSocket(port: server.port, target: "/ws")
        let frame = try socket.readFrame(timeout: 30)
        #expect(frame?.closeCode == 1000)
        try socket.sendClose(code: 1000)
        #expect(socket.waitForEOF())
    }

    @Test func aClientThatDoesNotReadIsDroppedNotBuffered() throws {
        let (server, delegate) = try Self.server { $0.webSocket.maxQueuedBytes = 256 * 1024 }
        defer { server.shutdown() }
        let socket = try TestWebSocket(port: server.port, target: "/ws")
        try socket.sendText("hello")
        var webSocket: WebSocket?
        _ = eventually {
            webSocket = delegate.opened.withLock { $0.first }
            return webSocket != nil
        }
        let chunk = String(repeating: "y", count: 16 * 1024)
        var refused = false
        // The kernel's buffers fill first (a few MB on loopback), then our queue's 256 KB.
        for _ in 0..<2_000 where !refused { refused = !(webSocket?.send(text: chunk) ?? false) }
        #expect(refused)
        #expect(delegate.closes.withLock { $0 } == [.policyViolation])
        #expect((webSocket?.queuedBytes ?? 1) == 0)
    }

    @Test func serverShutdownSays1001() throws {
        let (server, _) = try Self.server()
        let socket = try TestWebSocket(port: server.port, target: "/ws")
        try socket.sendText("x")
        _ = try socket.readText()
        server.shutdown()
        #expect(try socket.readFrame()?.closeCode == 1001)
    }

    @Test func framesSentWithTheHandshakeAreNotLost() throws {
        let (server, _) = try Self.server()
        defer { server.shutdown() }
        // The upgrade request and two frames in one write: the frames are read past the request.
        let client = try RawClient(port: server.port)
        let head =
            "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        client.write(Array(head.utf8) + TestWebSocket.frame(opcode: 0x1, Array("one".utf8)) + TestWebSocket.frame(opcode: 0x1, Array("two".utf8)))
        let answer = client.read { $0.contains("two") }.text
        #expect(answer.hasPrefix("HTTP/1.1 101 Switching Protocols"))
        #expect(answer.contains("one") && answer.contains("two"))
    }
}
