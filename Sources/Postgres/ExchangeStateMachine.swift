/// The reading side of a `PipelinedConnection`, without libpq: which result belongs to which
/// exchange's step, when an exchange is answered, and when the stream shows the connection lost.
///
/// Each exchange is its steps (a statement's Parse when it is prepared, then its execution), then
/// one Sync. libpq hands over, per step, its result and a NULL that ends it, and for the Sync a
/// `PGRES_PIPELINE_SYNC` result. Each event returns one action, which the connection performs;
/// the connection keeps no reading state of its own (as postgres-nio's `ConnectionStateMachine`).
struct ExchangeStateMachine {
    enum Step: Equatable {
        /// The Parse of a statement about to be prepared under `name` (its key in the cache).
        case prepare(key: String, name: String)
        /// A statement's execution.
        case execute
    }

    /// Exchanges sent and not yet answered, oldest first, from `head`.
    private var exchanges: [[Step]] = []
    private var head = 0
    /// The head exchange's step whose result comes next.
    private var step = 0
    /// The step's result was read; the NULL that ends it comes next.
    private var awaitingEnd = false

    /// Exchanges sent and not yet answered.
    var inFlight: Int { exchanges.count - head }

    /// An exchange was sent: its steps, then its Sync.
    mutating func sent(_ steps: [Step]) {
        exchanges.append(steps)
    }

    enum ResultAction: Equatable {
        /// The result of the head exchange's step: read it (a `prepare` confirms or refuses the
        /// name, an `execute` gives rows or the exchange's error).
        case record(Step)
        /// A further result of a step already read, or a result between the last step and the
        /// Sync that is not the Sync: cleared unread.
        case discard
        /// The head exchange's Sync: it is answered, and the next exchange's results follow.
        /// `last`: nothing else is in flight, so the connection's transaction status is
        /// known, and must be idle.
        case answered(last: Bool)
    }

    /// libpq gave a result (not NULL); `isSync` when its status is `PGRES_PIPELINE_SYNC`.
    mutating func receivedResult(isSync: Bool) -> ResultAction {
        precondition(head < exchanges.count, "a result read while no exchange is in flight")
        let steps = exchanges[head]
        if step < steps.count {
            if awaitingEnd { return .discard }
            awaitingEnd = true
            return .record(steps[step])
        }
        guard isSync else { return .discard }
        head += 1
        step = 0
        awaitingEnd = false
        if head == exchanges.count {
            exchanges.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 {
            exchanges.removeFirst(head)
            head = 0
        }
        return .answered(last: head == exchanges.count)
    }

    enum EndAction: Equatable {
        /// The NULL that ends a step's results: the next step's result (or the Sync) follows.
        case nextStep
        /// A NULL where none is owed: between the last step and the Sync.
        case ignore
        /// A NULL where a step's result was due: libpq has no result to give, the connection is lost.
        case connectionLost
    }

    /// libpq gave NULL.
    mutating func receivedEnd() -> EndAction {
        precondition(head < exchanges.count, "a result read while no exchange is in flight")
        guard step < exchanges[head].count else { return .ignore }
        guard awaitingEnd else { return .connectionLost }
        awaitingEnd = false
        step += 1
        return .nextStep
    }

    /// The connection closed: what was in flight is forgotten (the connection fails it).
    mutating func closed() {
        exchanges.removeAll()
        head = 0
        step = 0
        awaitingEnd = false
    }
}
