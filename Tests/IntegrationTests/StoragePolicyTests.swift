import Foundation
import TestSupport
import Testing

/// The `avatars` bucket's policies (migrations/20251128100000_storage.sql), decided by
/// PostgreSQL's row-level security with the caller's role and claims: who may read, write,
/// overwrite, move, delete and sign an object under the owner's folder.
@Suite("Storage: the avatars policy matrix", .serialized)
struct StoragePolicyTests {
    enum Actor: String, CaseIterable, CustomStringConvertible {
        case owner, coParent, stranger, anon, service
        var description: String { rawValue }
    }

    enum Operation: String, CaseIterable, CustomStringConvertible {
        case read, readPrivate, write, overwrite, move, delete, sign
        var description: String { rawValue }
    }

    /// The HTTP status each actor meets for each operation on the owner's objects: the owner and
    /// the service role may do everything, a co-parent only reads (and signs) the children's
    /// pictures, a stranger and anon nothing.
    static func expected(_ actor: Actor, _ operation: Operation) -> Int {
        switch (actor, operation) {
        case (.owner, _), (.service, _): return 200
        case (.coParent, .read), (.coParent, .sign): return 200
        case (.coParent, .readPrivate), (.coParent, .move), (.coParent, .delete): return 404
        case (.coParent, .write), (.coParent, .overwrite): return 403
        case (.stranger, .write), (.stranger, .overwrite), (.anon, .write), (.anon, .overwrite): return 403
        case (.stranger, _), (.anon, _): return 404
        }
    }

    @Test func everyActorMeetsThePolicies() throws {
        let server = try TestServer()
        let owner = try server.signUp()
        let coParent = try server.signUp()
        let stranger = try server.signUp()
        let family = try server.post("/rest/v1/rpc/create_family", #"{"name":"F"}"#, token: owner.token)
        let code = try #require(family.jsonObject?["invite_code"] as? String, "\(family.text)")
        #expect(try server.post("/rest/v1/rpc/join_family", #"{"code":"\#(code)"}"#, token: coParent.token).status == 200)

        let serviceHeaders = [("apikey", server.anonKey), ("Authorization", "Bearer \(server.serviceKey)")]
        func headers(_ actor: Actor) -> [(String, String)] {
            switch actor {
            case .owner: return [("apikey", server.anonKey), ("Authorization", "Bearer \(owner.token)")]
            case .coParent: return [("apikey", server.anonKey), ("Authorization", "Bearer \(coParent.token)")]
            case .stranger: return [("apikey", server.anonKey), ("Authorization", "Bearer \(stranger.token)")]
            case .anon: return [("apikey", server.anonKey)]
            case .service: return serviceHeaders
            }
        }
        let http = server.client()
        /// An object of the owner's, put there by the service role.
        func seed(_ name: String) throws {
            let put = try http.request(
                "POST", "/storage/v1/object/avatars/\(name)", headers: serviceHeaders + [("Content-Type", "image/png"), ("x-upsert", "true")],
                bodyBytes: Array(name.utf8))
            #expect(put.status == 200, "\(put.text)")
        }
        func attempt(_ actor: Actor, _ operation: Operation) throws -> TestResponse {
            let tag = "\(actor)-\(operation)"
            let child = "\(owner.id)/children/\(tag).png"
            let own = "\(owner.id)/\(tag).png"
            let h = headers(actor)
            let json = h + [("Content-Type", "application/json")]
            switch operation {
            case .read:
                try seed(child)
                return try http.request("GET", "/storage/v1/object/authenticated/avatars/\(child)", headers: h)
            case .readPrivate:
                try seed(own)
                return try http.request("GET", "/storage/v1/object/avatars/\(own)", headers: h)
            case .write:
                return try http.request("POST", "/storage/v1/object/avatars/\(child)", headers: h + [("Content-Type", "image/png")], bodyBytes: [1])
            case .overwrite:
                try seed(child)
                return try http.request(
                    "POST", "/storage/v1/object/avatars/\(child)", headers: h + [("Content-Type", "image/png"), ("x-upsert", "true")], bodyBytes: [2])
            case .move:
                try seed(child)
                return try http.request(
                    "POST", "/storage/v1/object/move", headers: json,
                    body: #"{"bucketId":"avatars","sourceKey":"\#(child)","destinationKey":"\#(owner.id)/children/\#(tag)-moved.png"}"#)
            case .delete:
                try seed(child)
                return try http.request("DELETE", "/storage/v1/object/avatars/\(child)", headers: h)
            case .sign:
                try seed(child)
                return try http.request("POST", "/storage/v1/object/sign/avatars/\(child)", headers: json, body: #"{"expiresIn":60}"#)
            }
        }
        for actor in Actor.allCases {
            for operation in Operation.allCases {
                let response = try attempt(actor, operation)
                let want = Self.expected(actor, operation)
                #expect(response.status == want, "\(actor) \(operation): \(response.status) \(response.text)")
                if want != 200 {
                    #expect(response.jsonObject?["statusCode"] as? String == String(want), "\(actor) \(operation): Storage's error shape")
                }
            }
        }

        // What a refused write leaves: nothing (the bytes written first are removed again).
        let seen = try http.request(
            "POST", "/storage/v1/object/list/avatars", headers: serviceHeaders + [("Content-Type", "application/json")],
            body: #"{"prefix":"\#(owner.id)/children","limit":1000}"#)
        let names = Set(seen.jsonArray?.compactMap { $0["name"] as? String } ?? [])
        #expect(!names.contains("coParent-write.png") && !names.contains("stranger-write.png") && !names.contains("anon-write.png"))
        #expect(names.contains("owner-write.png") && names.contains("owner-move-moved.png") && !names.contains("owner-delete.png"))
        let storedFiles = try FileManager.default.contentsOfDirectory(
            atPath: server.application.config.storage.directory.appendingPathComponent("objects").path)
        let rows = try http.request(
            "POST", "/storage/v1/object/list/avatars", headers: serviceHeaders + [("Content-Type", "application/json")],
            body: #"{"prefix":"\#(owner.id)","limit":1000}"#)
        let ownFiles = (rows.jsonArray ?? []).filter { !($0["id"] is NSNull) }.count
        #expect(storedFiles.count == names.count + ownFiles, "one file per object, none orphaned by a refusal")

        // Each user's own folder: the owner may not write into the stranger's, nor move there.
        let intoStranger = try http.request(
            "POST", "/storage/v1/object/avatars/\(stranger.id)/x.png", headers: headers(.owner) + [("Content-Type", "image/png")], bodyBytes: [1])
        #expect(intoStranger.status == 403)
        let moveOut = try http.request(
            "POST", "/storage/v1/object/move", headers: headers(.owner) + [("Content-Type", "application/json")],
            body: #"{"bucketId":"avatars","sourceKey":"\#(owner.id)/children/owner-write.png","destinationKey":"\#(stranger.id)/stolen.png"}"#)
        #expect(moveOut.status == 403, "\(moveOut.text)")
        // The owner lists only their own; the stranger sees nothing of theirs.
        let strangerList = try http.request(
            "POST", "/storage/v1/object/list/avatars", headers: headers(.stranger) + [("Content-Type", "application/json")],
            body: #"{"prefix":"\#(owner.id)/children"}"#)
        #expect(strangerList.status == 200 && strangerList.text == "[]")
        // A private bucket is not served by the public route.
        #expect(try http.request("GET", "/storage/v1/object/public/avatars/\(owner.id)/children/owner-write.png").status == 404)
        // Signed upload URLs are refused to whoever may not write there.
        #expect(try http.request("POST", "/storage/v1/object/upload/sign/avatars/\(owner.id)/s.png", headers: headers(.stranger)).status == 403)
        #expect(try http.request("POST", "/storage/v1/object/upload/sign/avatars/\(owner.id)/s.png", headers: headers(.owner)).status == 200)
    }
}
