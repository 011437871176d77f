import HTTP
import Identity
import Postgres

/// A hot standby that REST reads may go to: its pool (worker path) and its pipelined
/// connections (the I/O thread's path).
public final class ReadTarget: Sendable {
    public let name: String
    public let pool: Pool
    public let pipeline: PipelineClient?

    public init(name: String, pool: Pool, pipeline: PipelineClient?) {
        self.name = name
        self.pool = pool
        self.pipeline = pipeline
    }
}

/// Chooses where a REST read runs, and learns of every write (the app's `ReadReplicas`).
public protocol ReadRouting: Sendable {
    /// The standby for a read by the caller whose writes are tracked as `writer`, with a token
    /// issued at `issuedAt` (seconds since 1970, its `iat`); nil: the primary (no standby is
    /// healthy, or none has replayed that caller's last write, or what the primary held when the
    /// token was issued, yet).
    func target(forReadBy writer: String, issuedAt: Double?) -> ReadTarget?
    /// A request of `writer` that may have written on the primary has ended (committed,
    /// rolled back or failed). Called before its answer is sent.
    func wrote(_ writer: String)
    /// A read on `target` failed for a reason of the standby (connection lost, shut down,
    /// recovery conflict); it is answered from the primary instead.
    func failed(_ target: ReadTarget, _ error: PostgresError)
}

extension RESTService {
    /// Whose writes a caller's reads must see: the user's id, else the role (every anonymous
    /// caller, or service-role caller, shares one position).
    public static func writer(_ caller: Caller) -> String {
        caller.userID.map { $0.uuidString } ?? "role:" + caller.role
    }

    /// The standby a plan runs on: a `GET`/`HEAD` read (a table, embedded reads, counts, a
    /// read-only function) outside an explicit transaction, when the router has one for the
    /// caller. Everything else runs on the primary.
    func standby(for plan: ActionPlan, caller: Caller, method: String?) -> ReadTarget? {
        guard let reads, isRead(plan, method: method) else { return nil }
        return reads.target(forReadBy: Self.writer(caller), issuedAt: Self.issuedAt(caller.claimsJSON))
    }

    /// A `GET`/`HEAD` read outside an explicit transaction: what a standby may answer.
    func isRead(_ plan: ActionPlan, method: String?) -> Bool {
        plan.readOnly && !plan.rollback && !plan.mustDecide && (method == "GET" || method == "HEAD")
    }

    /// The `iat` claim of verified claims (the first `"iat":` member: the top level's, as the
    /// token issuer writes it first or alone; a nested one could only make the caller's own
    /// reads more conservative or staler by at most the standbys' lag limit).
    static func issuedAt(_ claimsJSON: String) -> Double? {
        guard let range = claimsJSON.range(of: "\"iat\":") else { return nil }
        let digits = claimsJSON[range.upperBound...].drop { $0 == " " }.prefix { $0.isNumber || $0 == "." }
        return Double(digits)
    }

    /// A failure that says nothing about the request, only about the standby: the read is
    /// answered from the primary. Connection failures, a shutdown (57P01…57P03), a conflict with
    /// recovery (40001), a standby that cannot connect (08…).
    static func isStandbyFailure(_ error: PostgresError) -> Bool {
        if error.kind == .connection { return true }
        guard let state = error.sqlState else { return error.kind == .client }
        return state.hasPrefix("57P") || state.hasPrefix("08") || state == "40001"
    }

    /// `execute` with the read on a standby when one is chosen; a standby's failure is retried
    /// on the primary. A plan that may write records its writer once it has ended.
    func routedExecute(
        _ plan: ActionPlan, statement: SQL, caller: Caller, context: RequestContext?, settings: PostgRESTSettings
    ) throws(RESTError) -> MainResult {
        if let target = standby(for: plan, caller: caller, method: context?.method) {
            do {
                return try execute(plan, statement: statement, caller: caller, context: context, settings: settings, on: target.pool)
            } catch .database(let cause, _) where Self.isStandbyFailure(cause) {
                reads?.failed(target, cause)
            }
        }
        defer { if !plan.readOnly { reads?.wrote(Self.writer(caller)) } }
        return try execute(plan, statement: statement, caller: caller, context: context, settings: settings, on: pool)
    }

    /// Sends a plan's exchange on the I/O thread: to a standby's pipelined connections for a
    /// routed read (on its failure, again to the primary's), else to the primary's. Returns
    /// false, having sent nothing, when no primary connection can take it (a worker serves it).
    ///
    /// On the primary, a read (what a standby could answer) goes to `primaryReads` when there
    /// are such connections: reads are CPU alone, and a few backends with many reads queued each
    /// answer more per wake-up than many backends with a few (on 2 cores, 2 connections served
    /// 40–50% more reads than 8, with a lower 99th percentile). Writes wait for their commit's WAL
    /// flush, so they keep more connections (more commits flushed together), and reads never
    /// queue behind a commit.
    func routedSubmit(
        _ plan: ActionPlan, _ exchange: Exchange, caller: Caller, method: String, primary writes: PipelineClient,
        primaryReads: PipelineClient? = nil, answer: @escaping (Result<[QueryResult], PostgresError>) -> Void
    ) -> Bool {
        let primary = isRead(plan, method: method) ? primaryReads ?? writes : writes
        if let target = standby(for: plan, caller: caller, method: method), let pipeline = target.pipeline {
            let sent = pipeline.submit(exchange.statements) { [self] outcome in
                if case .failure(let error) = outcome, Self.isStandbyFailure(error) {
                    reads?.failed(target, error)
                    if primary.submit(exchange.statements, completion: answer) { return }
                }
                answer(outcome)
            }
            if sent { return true }
        }
        let writer = plan.readOnly ? nil : Self.writer(caller)
        return primary.submit(exchange.statements) { [self] outcome in
            if let writer { reads?.wrote(writer) }
            answer(outcome)
        }
    }
}
