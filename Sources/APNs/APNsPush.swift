/// One push as its sender keeps it: the request, the environment it goes to, and where its one answer goes.
///
/// A caller that already keeps an object per push (the worker keeps one per consumed event) hands that object to
/// ``APNsClient/send(_:)-([any APNsPush])`` or ``APNsAppRouter/send(_:)-([any APNsPush])`` itself: nothing is wrapped
/// or copied per push, and ``answered(_:)`` runs exactly once, possibly on an event-loop thread.
public protocol APNsPush: AnyObject, Sendable {
    var request: APNsRequest { get }
    var environment: APNsEnvironment { get }
    /// APNs' answer, or a transport failure as a result (``APNsResult/transportFailure(reason:apnsID:)``).
    func answered(_ result: consuming APNsResult)
}
