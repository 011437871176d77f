import Testing

@testable import Postgres

/// The pipelined client's decisions, driven by submissions and by connections joining,
/// answering and being lost, and checked by the actions it asks for.
@Suite("Pipeline client state machine")
struct PipelineClientStateMachineTests {
    /// Connections are named by letters, exchanges by numbers.
    typealias Machine = PipelineClientStateMachine<String, Int>

    @Test func withNoConnectionASubmissionIsDeclined() {
        var machine = Machine(depth: 2, maxWaiting: 4)
        #expect(machine.submit(1) == .decline)
        #expect(machine.waiting == 0)
    }

    /// The least busy connection takes each exchange (the first joined among equals), and an
    /// idle one is checked for being alive first.
    @Test func theLeastBusyConnectionTakesTheExchange() {
        var machine = Machine(depth: 2, maxWaiting: 4)
        #expect(machine.joined("a") == .register)
        #expect(machine.joined("b") == .register)
        #expect(machine.open == 2)
        #expect(machine.submit(1) == .send("a", checkAlive: true))
        #expect(machine.submit(2) == .send("b", checkAlive: true))
        #expect(machine.submit(3) == .send("a", checkAlive: false))
        #expect(machine.inFlight(on: "a") == 2 && machine.inFlight(on: "b") == 1)
        machine.answered(on: "a")
        machine.answered(on: "a")
        #expect(machine.submit(4) == .send("a", checkAlive: true))
    }

    /// Once every connection is `depth` deep, exchanges wait, up to `maxWaiting`; an answer makes
    /// room for the oldest waiting one.
    @Test func fullConnectionsMakeExchangesWaitThenDecline() {
        var machine = Machine(depth: 1, maxWaiting: 2)
        #expect(machine.joined("a") == .register)
        #expect(machine.submit(1) == .send("a", checkAlive: true))
        #expect(machine.submit(2) == .wait)
        #expect(machine.submit(3) == .wait)
        #expect(machine.submit(4) == .decline)
        #expect(machine.waiting == 2)
        #expect(machine.room(on: "a") == .done)
        machine.answered(on: "a")
        #expect(machine.room(on: "a") == .send(2))
        #expect(machine.room(on: "a") == .done)
        #expect(machine.waiting == 1 && machine.inFlight(on: "a") == 1)
        machine.answered(on: "a")
        #expect(machine.room(on: "a") == .send(3))
    }

    /// A connection that joins takes the waiting exchanges it has room for.
    @Test func aJoiningConnectionTakesWhatWaits() {
        var machine = Machine(depth: 2, maxWaiting: 8)
        #expect(machine.joined("a") == .register)
        #expect(machine.submit(1) == .send("a", checkAlive: true))
        #expect(machine.submit(2) == .send("a", checkAlive: false))
        for work in 3...5 { #expect(machine.submit(work) == .wait) }
        #expect(machine.joined("b") == .register)
        #expect(machine.room(on: "b") == .send(3))
        #expect(machine.room(on: "b") == .send(4))
        #expect(machine.room(on: "b") == .done)
        #expect(machine.waiting == 1)
    }

    /// A lost connection is replaced; the waiting exchanges fail only when no connection is left.
    @Test func aLostConnectionIsReplacedAndTheLastOneFailsTheWaiting() {
        var machine = Machine(depth: 1, maxWaiting: 4)
        #expect(machine.joined("a") == .register)
        #expect(machine.joined("b") == .register)
        #expect(machine.submit(1) == .send("a", checkAlive: true))
        #expect(machine.submit(2) == .send("b", checkAlive: true))
        #expect(machine.submit(3) == .wait)
        #expect(machine.submit(4) == .wait)
        #expect(machine.lost("a") == .close(failing: [], reconnect: true))
        #expect(machine.waiting == 2 && machine.open == 1)
        #expect(machine.room(on: "a") == .done)
        #expect(machine.lost("b") == .close(failing: [3, 4], reconnect: true))
        #expect(machine.waiting == 0 && machine.open == 0)
        #expect(machine.submit(5) == .decline)
    }

    /// An idle connection found dead is reported lost, and the submission goes to the next one.
    @Test func anIdleConnectionFoundDeadIsSkipped() {
        var machine = Machine(depth: 4, maxWaiting: 4)
        #expect(machine.joined("a") == .register)
        #expect(machine.joined("b") == .register)
        #expect(machine.submit(1) == .send("a", checkAlive: true))
        #expect(machine.lost("a") == .close(failing: [], reconnect: true))
        #expect(machine.submit(2) == .send("b", checkAlive: true))
        #expect(machine.inFlight(on: "a") == 0 && machine.inFlight(on: "b") == 1)
    }

    /// Closing closes every connection and fails what waits; a connection that joins afterwards
    /// is closed unused, and one lost afterwards is not replaced.
    @Test func closingEndsEverything() {
        var machine = Machine(depth: 1, maxWaiting: 4)
        #expect(machine.joined("a") == .register)
        #expect(machine.joined("b") == .register)
        #expect(machine.submit(1) == .send("a", checkAlive: true))
        #expect(machine.submit(2) == .send("b", checkAlive: true))
        #expect(machine.submit(3) == .wait)
        #expect(machine.close() == .close(["a", "b"], failing: [3]))
        #expect(machine.open == 0 && machine.waiting == 0)
        #expect(machine.joined("c") == .close)
        #expect(machine.lost("a") == .close(failing: [], reconnect: false))
        #expect(machine.submit(4) == .decline)
        #expect(machine.close() == .close([], failing: []))
    }
}
