import Foundation
import TestSupport
import Testing

/// How the server reads the Phoenix frames clients send, byte for byte: refs of any JSON type,
/// payloads that are not objects, frames that are not messages, and the join and access_token
/// payloads' members of other types (read as absent).
@Suite("Realtime frames as the server reads them", .serialized)
struct RealtimeFrameTests {
    let server: TestServer

    init() throws { server = try TestServer() }

    func socket(_ vsn: String, apikey: String? = nil) throws -> TestWebSocket {
        let socket = try TestWebSocket(port: server.port, target: "/realtime/v1/websocket?apikey=\(apikey ?? server.anonKey)&vsn=\(vsn)")
        #expect(socket.status == 101)
        return socket
    }

    /// Sends `frame`, returns the next text message.
    func exchange(_ socket: TestWebSocket, _ frame: String) throws -> String? {
        try socket.sendText(frame)
        return try socket.readText()
    }

    /// The close frame's code and reason after `frame`.
    func closing(_ socket: TestWebSocket, _ frame: String) throws -> (code: UInt16?, reason: String)? {
        try socket.sendText(frame)
        while let frame = try socket.readFrame() {
            if frame.opcode == 0x8 { return (frame.closeCode, String(decoding: frame.payload.dropFirst(2), as: UTF8.self)) }
        }
        return nil
    }

    @Test func version1Frames() throws {
        let socket = try socket("1.0.0")
        func heartbeat(_ ref: String, joinRef: String = "null") -> String {
            #"{"topic":"phoenix","event":"phx_reply","payload":{"status":"ok","response":{}},"ref":\#(ref),"join_ref":\#(joinRef)}"#
        }
        #expect(try exchange(socket, #"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"9"}"#) == heartbeat(#""9""#))
        #expect(try exchange(socket, #"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":7}"#) == heartbeat(#""7""#))
        #expect(
            try exchange(socket, #"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":1.5,"join_ref":12}"#) == heartbeat(#""1.5""#, joinRef: #""12""#))
        #expect(try exchange(socket, #"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":true}"#) == heartbeat(#""1""#))
        #expect(try exchange(socket, #"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":{"a":1},"join_ref":[]}"#) == heartbeat("null"))
        #expect(try exchange(socket, #"{"topic":"phoenix","event":"heartbeat","payload":[1],"ref":"3"}"#) == heartbeat(#""3""#))
        #expect(try exchange(socket, #"{"topic":"phoenix","event":"heartbeat","ref":"4"}"#) == heartbeat(#""4""#))
        #expect(try exchange(socket, #"{"topic":"phoenix","event":"heartbeat","ref":"5","ref":"6"}"#) == heartbeat(#""6""#))
        let closed = try closing(socket, #"{"topic":5,"event":"heartbeat","payload":{},"ref":"8"}"#)
        #expect(closed?.code == 1003 && closed?.reason == "not a Phoenix 1.0.0 message")
    }

    @Test func version2Frames() throws {
        let socket = try socket("2.0.0")
        #expect(try exchange(socket, #"[null,"1","phoenix","heartbeat",{}]"#) == #"[null,"1","phoenix","phx_reply",{"status":"ok","response":{}}]"#)
        #expect(try exchange(socket, #"[2,3,"phoenix","heartbeat",{"x":[]},"extra"]"#) == #"["2","3","phoenix","phx_reply",{"status":"ok","response":{}}]"#)
        #expect(
            try exchange(socket, #"[null,"4","nowhere","heartbeat",{}]"#)
                == #"[null,"4","nowhere","phx_reply",{"status":"error","response":{"reason":"unmatched topic"}}]"#)
        let closed = try closing(socket, #"[null,"5","phoenix","heartbeat",[]]"#)
        #expect(closed?.code == 1003 && closed?.reason == "not a Phoenix 2.0.0 message")
        for frame in [
            #"[null,"5","phoenix","heartbeat"]"#, #"{"topic":"phoenix","event":"heartbeat","payload":{}}"#, "not json", #"[null,"5",7,"heartbeat",{}]"#
        ] {
            let another = try self.socket("2.0.0")
            let closed = try closing(another, frame)
            #expect(closed?.code == 1003 && closed?.reason == "not a Phoenix 2.0.0 message", "\(frame)")
        }
    }

    @Test func joinPayloads() throws {
        let user = try server.signUp()
        let socket = try socket("2.0.0")
        func reply(_ topic: String, _ ref: String, _ response: String, status: String = "ok") -> String {
            #"["\#(ref)","\#(ref)","\#(topic)","phx_reply",{"status":"\#(status)","response":\#(response)}]"#
        }
        // `access_token` of another type: `user_token`, else the socket's key.
        #expect(
            try exchange(socket, #"["1","1","realtime:a","phx_join",{"access_token":5,"user_token":"garbage"}]"#)
                == reply("realtime:a", "1", #"{"reason":"MalformedJWT: The token provided is not a valid JWT"}"#, status: "error"))
        #expect(
            try exchange(socket, #"["2","2","realtime:b","phx_join",{"access_token":5,"user_token":[],"config":{"postgres_changes":{}}}]"#)
                == reply("realtime:b", "2", #"{"postgres_changes":[]}"#))
        #expect(
            try exchange(socket, #"["3","3","realtime:c","phx_join",{"access_token":"\#(user.token)","config":[]}]"#)
                == reply("realtime:c", "3", #"{"postgres_changes":[]}"#))
        #expect(
            try exchange(socket, #"["4","4","realtime:d","phx_join",{"config":{"postgres_changes":[5]}}]"#)
                == reply("realtime:d", "4", #"{"reason":"Invalid postgres_changes entry: 5"}"#, status: "error"))
        #expect(
            try exchange(socket, #"["5","5","realtime:e","phx_join",{"config":{"postgres_changes":[{"event":"nope","b":[2,1],"a":"\/"}]}}]"#)
                == reply("realtime:e", "5", #"{"reason":"Invalid postgres_changes entry: {\"a\":\"/\",\"b\":[2,1],\"event\":\"nope\"}"}"#, status: "error"))
        // An entry is echoed as sent (keys sorted), with its id; members of other types read as absent.
        let entry = #"{"table":"user_profiles","schema":"public","event":"update","filter":"","zeta":{"b":1.5,"a":null}}"#
        let echoed = try exchange(socket, #"["6","6","realtime:f","phx_join",{"access_token":"\#(user.token)","config":{"postgres_changes":[\#(entry)]}}]"#)
        #expect(
            echoed
                == reply(
                    "realtime:f", "6",
                    #"{"postgres_changes":[{"event":"update","filter":"","schema":"public","table":"user_profiles","zeta":{"a":null,"b":1.5},"id":56912872}]}"#)
        )
        #expect(
            try socket.readText()
                == #"["6",null,"realtime:f","system",{"channel":"f","extension":"postgres_changes","message":"Subscribed to PostgreSQL","status":"ok"}]"#)
        let odd = #"{"event":5,"schema":7,"table":"nope","filter":9}"#
        let oddEcho = try exchange(socket, #"["7","7","realtime:g","phx_join",{"access_token":"\#(user.token)","config":{"postgres_changes":[\#(odd)]}}]"#)
        #expect(oddEcho == reply("realtime:g", "7", #"{"postgres_changes":[{"event":5,"filter":9,"schema":7,"table":"nope","id":10264259}]}"#))
        let oddSystem = try socket.readText()
        #expect(
            oddSystem
                == #"["7",null,"realtime:g","system",{"channel":"g","extension":"postgres_changes","message":"Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: [event: *, schema: public, table: nope, filters: []]","status":"error"}]"#
        )
    }

    @Test func accessTokenPayloads() throws {
        let user = try server.signUp()
        let socket = try socket("2.0.0")
        #expect(
            try exchange(socket, #"["1","1","realtime:a","phx_join",{"access_token":"\#(user.token)"}]"#)
                == #"["1","1","realtime:a","phx_reply",{"status":"ok","response":{"postgres_changes":[]}}]"#)
        // A token of another type is ignored: the next frame is the heartbeat's reply.
        try socket.sendText(#"["1","2","realtime:a","access_token",{"access_token":5}]"#)
        #expect(try exchange(socket, #"[null,"3","phoenix","heartbeat",{}]"#) == #"[null,"3","phoenix","phx_reply",{"status":"ok","response":{}}]"#)
        try socket.sendText(#"["1","4","realtime:a","access_token",{"access_token":"garbage"}]"#)
        let kicked = try socket.readText()
        #expect(
            kicked
                == #"["1",null,"realtime:a","system",{"channel":"a","extension":"system","message":"The token provided is not a valid JWT","status":"error"}]"#)
        let closed = try socket.readText()
        #expect(closed == #"["1","1","realtime:a","phx_close",{}]"#)
    }
}
