import Testing

@testable import Postgres

/// The reading side of a pipelined connection, driven by the results libpq would hand over and
/// checked by the actions it asks for.
@Suite("Exchange state machine")
struct ExchangeStateMachineTests {
    typealias Machine = ExchangeStateMachine

    /// One exchange of a prepared statement then a known one: Parse, execute, execute, Sync.
    @Test func anExchangeIsItsStepsThenItsSync() {
        var machine = Machine()
        machine.sent([.prepare(key: "k", name: "onboard_p1"), .execute, .execute])
        #expect(machine.inFlight == 1)
        #expect(machine.receivedResult(isSync: false) == .record(.prepare(key: "k", name: "onboard_p1")))
        #expect(machine.receivedEnd() == .nextStep)
        #expect(machine.receivedResult(isSync: false) == .record(.execute))
        #expect(machine.receivedEnd() == .nextStep)
        #expect(machine.receivedResult(isSync: false) == .record(.execute))
        #expect(machine.receivedEnd() == .nextStep)
        #expect(machine.receivedResult(isSync: true) == .answered(last: true))
        #expect(machine.inFlight == 0)
    }

    /// A step may give more than one result before its NULL (a COPY, a multi-result command):
    /// only the first is the step's. Between the last step and the Sync, NULLs and other
    /// results change nothing.
    @Test func furtherResultsOfAStepAndStrayNullsAreSkipped() {
        var machine = Machine()
        machine.sent([.execute])
        #expect(machine.receivedResult(isSync: false) == .record(.execute))
        #expect(machine.receivedResult(isSync: false) == .discard)
        #expect(machine.receivedEnd() == .nextStep)
        #expect(machine.receivedEnd() == .ignore)
        #expect(machine.receivedResult(isSync: false) == .discard)
        #expect(machine.receivedResult(isSync: true) == .answered(last: true))
    }

    /// Pipelined exchanges are answered in order; only the last one in flight may check the
    /// connection's transaction status.
    @Test func exchangesAreAnsweredInOrderAndOnlyTheLastSeesTheConnectionIdle() {
        var machine = Machine()
        machine.sent([.execute])
        machine.sent([.prepare(key: "a", name: "onboard_p2"), .execute])
        #expect(machine.inFlight == 2)
        #expect(machine.receivedResult(isSync: false) == .record(.execute))
        #expect(machine.receivedEnd() == .nextStep)
        #expect(machine.receivedResult(isSync: true) == .answered(last: false))
        #expect(machine.inFlight == 1)
        #expect(machine.receivedResult(isSync: false) == .record(.prepare(key: "a", name: "onboard_p2")))
        #expect(machine.receivedEnd() == .nextStep)
        #expect(machine.receivedResult(isSync: false) == .record(.execute))
        #expect(machine.receivedEnd() == .nextStep)
        #expect(machine.receivedResult(isSync: true) == .answered(last: true))
    }

    /// A NULL where a step's result is owed is libpq saying the connection is gone.
    @Test func aNullWhereAResultIsOwedIsALostConnection() {
        var machine = Machine()
        machine.sent([.execute, .execute])
        #expect(machine.receivedEnd() == .connectionLost)
        var second = Machine()
        second.sent([.execute, .execute])
        #expect(second.receivedResult(isSync: false) == .record(.execute))
        #expect(second.receivedEnd() == .nextStep)
        #expect(second.receivedEnd() == .connectionLost)
    }

    /// A Sync-status result in the middle of the steps is read as the step's (an error result
    /// there), never as the end of the exchange.
    @Test func aSyncBeforeTheStepsAreDoneIsTheStepsResult() {
        var machine = Machine()
        machine.sent([.execute])
        #expect(machine.receivedResult(isSync: true) == .record(.execute))
        #expect(machine.inFlight == 1)
    }

    /// An empty exchange (no statements) is answered by its Sync alone; after `closed` nothing is
    /// in flight and the next exchange starts from its first step.
    @Test func anEmptyExchangeAndAClosedMachine() {
        var machine = Machine()
        machine.sent([])
        #expect(machine.receivedEnd() == .ignore)
        #expect(machine.receivedResult(isSync: true) == .answered(last: true))
        machine.sent([.execute, .execute])
        #expect(machine.receivedResult(isSync: false) == .record(.execute))
        machine.closed()
        #expect(machine.inFlight == 0)
        machine.sent([.execute])
        #expect(machine.receivedResult(isSync: false) == .record(.execute))
    }

    /// Past 64 answered exchanges the queue is compacted; the order and `last` stay right.
    @Test func aLongPipelineStaysInOrder() {
        var machine = Machine()
        for index in 0..<100 { machine.sent(index % 2 == 0 ? [.execute] : [.prepare(key: "\(index)", name: "n\(index)"), .execute]) }
        for index in 0..<100 {
            if index % 2 == 1 {
                #expect(machine.receivedResult(isSync: false) == .record(.prepare(key: "\(index)", name: "n\(index)")))
                #expect(machine.receivedEnd() == .nextStep)
            }
            #expect(machine.receivedResult(isSync: false) == .record(.execute))
            #expect(machine.receivedEnd() == .nextStep)
            #expect(machine.receivedResult(isSync: true) == .answered(last: index == 99))
            #expect(machine.inFlight == 99 - index)
        }
    }
}
