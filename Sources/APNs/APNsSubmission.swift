/// One push handed to ``APNsClient/send(_:)-([APNsSubmission])`` or ``APNsAppRouter/send(_:)-([APNsSubmission])``
/// together with others: the request, its environment and its completion, which runs exactly once as for a single
/// ``APNsClient/send(_:environment:completion:)``.
public struct APNsSubmission: Sendable {
    public let request: APNsRequest
    public let environment: APNsEnvironment
    public let completion: @Sendable (APNsResult) -> Void
    /// The app's route when an ``APNsAppRouter`` admitted it (its answer then counts on the route).
    let route: APNsAppRouter.Route?

    public init(request: APNsRequest, environment: APNsEnvironment, completion: @escaping @Sendable (APNsResult) -> Void) {
        self.request = request
        self.environment = environment
        self.completion = completion
        route = nil
    }

    /// `submission`, admitted on `route`.
    init(_ submission: APNsSubmission, route: APNsAppRouter.Route) {
        request = submission.request
        environment = submission.environment
        completion = submission.completion
        self.route = route
    }
}
