/// What a `PipelineClient` decides, without libpq: which connection takes an exchange, when one
/// waits or is declined, and what a connection that joins, answers or is lost does to the
/// waiting ones. The waiting exchanges (`Work`: the client's statements and completion) are the
/// machine's own, oldest first; the client performs each action, which hands back the work it
/// concerns.
struct PipelineClientStateMachine<Connection: Equatable, Work> {
    /// Exchanges in flight on one connection at most.
    let depth: Int
    /// Exchanges that may wait for a connection.
    let maxWaiting: Int
    /// Connections open and in the loop, in the order they joined, with their exchanges in flight.
    private var live: [(connection: Connection, inFlight: Int)] = []
    /// Exchanges waiting for a connection with room: `queue[head...]`, oldest first (taken from
    /// the front by moving `head`, the storage reused once empty).
    private var queue: [Work] = []
    private var head = 0
    private var closed = false

    init(depth: Int, maxWaiting: Int) {
        self.depth = depth
        self.maxWaiting = maxWaiting
    }

    /// Connections open.
    var open: Int { live.count }

    /// Exchanges waiting for a connection with room.
    var waiting: Int { queue.count - head }

    /// Exchanges in flight on `connection` (0 when it is not open).
    func inFlight(on connection: Connection) -> Int {
        live.first { $0.connection == connection }?.inFlight ?? 0
    }

    enum SubmitAction: Equatable {
        /// Send the exchange on this connection, the least busy one. `checkAlive`: nothing is in
        /// flight on it, so a server that ended it while idle shows only when asked; if it is
        /// gone, report it `lost` and submit again.
        case send(Connection, checkAlive: Bool)
        /// Every connection is `depth` deep: the exchange waits, last in line (the machine keeps
        /// it).
        case wait
        /// No connection is open, or `maxWaiting` exchanges already wait: the caller takes its
        /// other path.
        case decline
    }

    /// `work` is submitted: sent on a connection by the caller, kept waiting, or declined.
    mutating func submit(_ work: Work) -> SubmitAction {
        var best: Int?
        for index in live.indices where best == nil || live[index].inFlight < live[best!].inFlight { best = index }
        guard let best else { return .decline }
        guard live[best].inFlight < depth else {
            guard waiting < maxWaiting else { return .decline }
            queue.append(work)
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

    enum RoomAction {
        /// Send this, the oldest waiting exchange, on the connection (asked again afterwards).
        case send(Work)
        /// Nothing waits, the connection is full, or it is no longer open.
        case done
    }

    /// Whether the connection (just joined, or just answering) takes a waiting exchange.
    mutating func room(on connection: Connection) -> RoomAction {
        guard waiting > 0, let index = live.firstIndex(where: { $0.connection == connection }), live[index].inFlight < depth else {
            return .done
        }
        live[index].inFlight += 1
        let oldest = queue[head]
        head += 1
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        }
        return .send(oldest)
    }

    enum LostAction {
        /// Close the connection (its exchanges in flight fail); `failing`: the waiting exchanges,
        /// when no connection is left to take them; `reconnect`: open another in its place (not
        /// once the client is closed).
        case close(failing: [Work], reconnect: Bool)
    }

    /// The connection is unusable (lost, out of step, or left inside a transaction).
    mutating func lost(_ connection: Connection) -> LostAction {
        live.removeAll { $0.connection == connection }
        return .close(failing: live.isEmpty ? takeAllWaiting() : [], reconnect: !closed)
    }

    enum CloseAction {
        /// Close these connections (what is in flight fails); `failing`: the waiting exchanges.
        case close([Connection], failing: [Work])
    }

    /// The client is closing: every connection goes, none is reopened.
    mutating func close() -> CloseAction {
        closed = true
        let connections = live.map(\.connection)
        live.removeAll()
        return .close(connections, failing: takeAllWaiting())
    }

    private mutating func takeAllWaiting() -> [Work] {
        let all = Array(queue[head...])
        queue.removeAll()
        head = 0
        return all
    }
}

extension PipelineClientStateMachine.RoomAction: Equatable where Work: Equatable {}
extension PipelineClientStateMachine.LostAction: Equatable where Work: Equatable {}
extension PipelineClientStateMachine.CloseAction: Equatable where Work: Equatable {}
