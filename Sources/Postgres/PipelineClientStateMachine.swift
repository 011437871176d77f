/// What a `PipelineClient` decides, without libpq or closures: which connection takes an
/// exchange, when one waits or is declined, and what a connection that joins, answers or is lost
/// does to the waiting ones. The client performs each action and keeps the waiting exchanges'
/// statements and completions in the same order as the state machine counts them.
struct PipelineClientStateMachine<Connection: Equatable> {
    /// Exchanges in flight on one connection at most.
    let depth: Int
    /// Exchanges that may wait for a connection.
    let maxWaiting: Int
    /// Connections open and in the loop, in the order they joined, with their exchanges in flight.
    private var live: [(connection: Connection, inFlight: Int)] = []
    /// Exchanges waiting for a connection with room.
    private(set) var waiting = 0
    private var closed = false

    init(depth: Int, maxWaiting: Int) {
        self.depth = depth
        self.maxWaiting = maxWaiting
    }

    /// Connections open.
    var open: Int { live.count }

    /// Exchanges in flight on `connection` (0 when it is not open).
    func inFlight(on connection: Connection) -> Int {
        live.first { $0.connection == connection }?.inFlight ?? 0
    }

    enum SubmitAction: Equatable {
        /// Send the exchange on this connection, the least busy one. `checkAlive`: nothing is in
        /// flight on it, so a server that ended it while idle shows only when asked; if it is
        /// gone, report it `lost` and submit again.
        case send(Connection, checkAlive: Bool)
        /// Every connection is `depth` deep: the exchange waits, last in line.
        case wait
        /// No connection is open, or `maxWaiting` exchanges already wait: the caller takes its
        /// other path.
        case decline
    }

    mutating func submit() -> SubmitAction {
        var best: Int?
        for index in live.indices where best == nil || live[index].inFlight < live[best!].inFlight { best = index }
        guard let best else { return .decline }
        guard live[best].inFlight < depth else {
            guard waiting < maxWaiting else { return .decline }
            waiting += 1
            return .wait
        }
        live[best].inFlight += 1
        return .send(live[best].connection, checkAlive: live[best].inFlight == 1)
    }

    enum JoinAction: Equatable {
        /// Put the connection in the loop; then offer it the waiting exchanges (`room`).
        case register
        /// The client closed while it connected: close it unused.
        case close
    }

    /// A connection opened in the background reached the loop.
    mutating func joined(_ connection: Connection) -> JoinAction {
        guard !closed else { return .close }
        live.append((connection, 0))
        return .register
    }

    /// One of the connection's exchanges was answered.
    mutating func answered(on connection: Connection) {
        guard let index = live.firstIndex(where: { $0.connection == connection }) else { return }
        live[index].inFlight -= 1
    }

    enum RoomAction: Equatable {
        /// Send the oldest waiting exchange on the connection (asked again afterwards).
        case sendOldestWaiting
        /// Nothing waits, the connection is full, or it is no longer open.
        case done
    }

    /// Whether the connection (just joined, or just answering) takes a waiting exchange.
    mutating func room(on connection: Connection) -> RoomAction {
        guard waiting > 0, let index = live.firstIndex(where: { $0.connection == connection }), live[index].inFlight < depth else {
            return .done
        }
        waiting -= 1
        live[index].inFlight += 1
        return .sendOldestWaiting
    }

    enum LostAction: Equatable {
        /// Close the connection (its exchanges in flight fail); `failWaiting`: no connection is
        /// left to take the waiting exchanges, so they fail too; `reconnect`: open another in its
        /// place (not once the client is closed).
        case close(failWaiting: Bool, reconnect: Bool)
    }

    /// The connection is unusable (lost, out of step, or left inside a transaction).
    mutating func lost(_ connection: Connection) -> LostAction {
        live.removeAll { $0.connection == connection }
        let failWaiting = live.isEmpty && waiting > 0
        if failWaiting { waiting = 0 }
        return .close(failWaiting: failWaiting, reconnect: !closed)
    }

    enum CloseAction: Equatable {
        /// Close these connections (what is in flight fails); `failWaiting`: the waiting
        /// exchanges fail.
        case close([Connection], failWaiting: Bool)
    }

    /// The client is closing: every connection goes, none is reopened.
    mutating func close() -> CloseAction {
        closed = true
        let connections = live.map(\.connection)
        live.removeAll()
        let failWaiting = waiting > 0
        waiting = 0
        return .close(connections, failWaiting: failWaiting)
    }
}
