/// A clock backed by a closure, for callers that already have a time source.
public struct APNsClosureClock: APNsClock {
    private let body: @Sendable () -> Double
    public init(_ body: @escaping @Sendable () -> Double) { self.body = body }
    public func now() -> Double { body() }
}
