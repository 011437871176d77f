import Foundation
import HTTP
import Identity
import Postgres

/// At most `hits` requests per `window` seconds.
public struct RateLimit: Sendable, Equatable {
    public var hits: Int
    public var window: Double

    public init(hits: Int, window: Double) {
        self.hits = hits
        self.window = window
    }
}

/// One hit a request spends on each of `keys` (`bucket:key`) against `limit`. The budgets an
/// endpoint spends before its handler are its line's in `AuthRoute.table`; two more depend on
/// what the handler finds and are spent by it (`emailChangeBudget`, `mfaBudget`): spending them
/// earlier would count requests refused later.
struct Budget: Sendable, Equatable {
    var limit: RateLimit
    var bucket: String
    var keys: [String]
}

extension AuthService {
    /// `PUT /user` with a new e-mail or number: spent once the change is valid, before its mails
    /// or its SMS.
    func emailChangeBudget(_ request: HTTPRequest) -> Budget {
        Budget(limit: config.mail.otpRequestLimit, bucket: "otp", keys: ["ip:\(clientAddress(request))"])
    }

    /// An MFA challenge or verification: spent once the caller's factor is found and TOTP
    /// verification is on.
    func mfaBudget(_ request: HTTPRequest) -> Budget {
        Budget(limit: config.mfa.challengeAndVerifyLimit, bucket: "mfa", keys: ["ip:\(clientAddress(request))"])
    }

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

    /// One hit on each key of the budget, counted in PostgreSQL so that every replica shares
    /// it (one small upsert beside a bcrypt check); 429 once a key is over.
    func spend(_ budget: Budget) throws {
        try pool.withConnection { try RateLimitCounters.check($0, keys: budget.keys.map { "\(budget.bucket):\($0)" }, limit: budget.limit) }
    }
}
