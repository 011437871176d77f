import Foundation
import HTTP
import Identity
import Synchronization

/// Plans of reads already made, by everything a read's plan is made from: the method, the
/// resource, the raw query string, the headers the request parser reads (`Accept`, `Prefer`,
/// `Range`, `Content-Type`, the profile headers) and the caller's role and user id (the ownership
/// rule's inputs). A repeated read skips parsing, planning and writing its SQL; the statement and
/// its binds are the same bytes the planner wrote the first time.
///
/// Only GET and HEAD without a body are kept (a write's plan depends on its body); only plans,
/// never failures (an error is planned again, and answered the same). The entries belong to one
/// schema cache and one set of settings: `RESTService` passes their generations, and a change of
/// either empties the cache. At most `capacity` entries: past it, a new one replaces the oldest.
final class PlanCache: Sendable {
    struct Key: Hashable, Sendable {
        let method: String
        let resource: String
        let query: String
        /// The headers the request parser reads, in one string (each value after its name).
        let headers: String
        let role: String
        let userID: UUID?
    }

    private struct State {
        var entries: [Key: ActionPlan] = [:]
        /// The keys in the order they were kept (a ring once full); `next` is the oldest.
        var order: [Key] = []
        var next = 0
        var schemaGeneration = -1
        var settingsGeneration = -1
        var hits = 0
        var misses = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    /// As many as the verified-token cache holds tokens: each active user's reads fit.
    init(capacity: Int = 16_384) {
        self.capacity = capacity
    }

    /// The headers that decide a read's plan (see `ApiRequest.parse`).
    static let planHeaders = ["accept", "prefer", "range", "content-type", "accept-profile", "content-profile"]

    /// The key of a request whose plan may be kept, or nil (a write, or a request with a body).
    static func key(_ request: HTTPRequest, resource: String, caller: Caller) -> Key? {
        guard request.method == .get || request.method == .head, request.body.isEmpty else { return nil }
        // By name in `planHeaders`' order, a repeated one's values in their order: the same read
        // is one entry whichever order a client writes its headers in (wrk's threads, for one,
        // each write them in an order of their own).
        var headers = ""
        for name in planHeaders {
            for field in request.headers where field.name.equalsIgnoringASCIICase(name) {
                headers += name
                headers += ":"
                headers += field.value
                headers += "\n"
            }
        }
        return Key(
            method: request.method.rawValue, resource: resource, query: request.rawQuery, headers: headers, role: caller.role,
            userID: caller.userID)
    }

    /// The plan kept for `key` under these generations.
    func plan(for key: Key, schemaGeneration: Int, settingsGeneration: Int) -> ActionPlan? {
        state.withLock { state in
            guard state.schemaGeneration == schemaGeneration, state.settingsGeneration == settingsGeneration,
                let plan = state.entries[key]
            else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            return plan
        }
    }

    func keep(_ plan: ActionPlan, for key: Key, schemaGeneration: Int, settingsGeneration: Int) {
        guard capacity > 0 else { return }
        state.withLock { state in
            if state.schemaGeneration != schemaGeneration || state.settingsGeneration != settingsGeneration {
                state.entries.removeAll()
                state.order.removeAll()
                state.next = 0
                state.schemaGeneration = schemaGeneration
                state.settingsGeneration = settingsGeneration
            }
            guard state.entries.updateValue(plan, forKey: key) == nil else { return }
            if state.order.count < capacity {
                state.order.append(key)
            } else {
                state.entries[state.order[state.next]] = nil
                state.order[state.next] = key
                state.next = (state.next + 1) % capacity
            }
        }
    }

    /// Entries kept, and lookups that found one or not (tests, metrics).
    var counts: (entries: Int, hits: Int, misses: Int) {
        state.withLock { ($0.entries.count, $0.hits, $0.misses) }
    }
}

extension RESTService {
    /// `plan`, or the plan kept for the same read (see `PlanCache`).
    func cachedPlan(
        _ request: HTTPRequest, resource: String, caller: Caller, settings: PostgRESTSettings, settingsGeneration: Int
    ) throws(RESTError) -> ActionPlan {
        let (caches, schemaGeneration) = schema.cachesAndGeneration
        guard let key = PlanCache.key(request, resource: resource, caller: caller) else {
            return try Self.plan(request, resource: resource, caller: caller, caches: caches, config: config, settings: settings)
        }
        if let plan = plans.plan(for: key, schemaGeneration: schemaGeneration, settingsGeneration: settingsGeneration) { return plan }
        var plan = try Self.plan(request, resource: resource, caller: caller, caches: caches, config: config, settings: settings)
        // Written once here, the statement's text is read by every hit without being written again.
        plan.statement = plan.statement?.finished()
        plans.keep(plan, for: key, schemaGeneration: schemaGeneration, settingsGeneration: settingsGeneration)
        return plan
    }
}
