/// A ``RecordSettlement`` made of two closures (tests, and callers without a settlement object of their own).
final class ClosureSettlement: RecordSettlement {
    private let onDone: @Sendable (Outcome) -> Void
    private let onGiveBack: @Sendable () -> Void

    init(done: @escaping @Sendable (Outcome) -> Void, giveBack: @escaping @Sendable () -> Void) {
        onDone = done
        onGiveBack = giveBack
    }

    func done(_ outcome: Outcome) { onDone(outcome) }
    func giveBack() { onGiveBack() }
}
