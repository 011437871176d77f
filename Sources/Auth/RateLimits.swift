import Foundation
import HTTP
import Identity
import Postgres

extension AuthService {
    /// The client's address: the configured header's last hop (the one the trusted proxy
    /// appended to `X-Forwarded-For`), else the TCP peer.
    func clientAddress(_ request: HTTPRequest) -> String {
        Self.clientAddress(request, trustedHeader: config.rateLimitHeader)
    }

    /// The client: the last hop of `trustedHeader` (set by the proxy in front) when configured
    /// and present, else the TCP peer.
    public static func clientAddress(_ request: HTTPRequest, trustedHeader: String?) -> String {
        guard let name = trustedHeader, let value = request.headers.values(name).last,
            let hop = value.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !hop.isEmpty
        else {
            return request.remoteAddress
        }
        return hop
    }

    /// One hit on each key of `bucket`, counted in PostgreSQL so that every replica shares the
    /// budget (one small upsert beside a bcrypt check); 429 once a key is over.
    func checkRate(_ limit: RateLimit, _ bucket: String, keys: [String]) throws {
        try pool.withConnection { try RateLimitCounters.check($0, keys: keys.map { "\(bucket):\($0)" }, limit: limit) }
    }
}

/// At most `hits` requests per `window` seconds.
public struct RateLimit: Sendable, Equatable {
    public var hits: Int
    public var window: Double

    public init(hits: Int, window: Double) {
        self.hits = hits
        self.window = window
    }
}
