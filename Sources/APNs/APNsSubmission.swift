/// One push handed to ``APNsClient/send(_:)-([APNsSubmission])`` or ``APNsAppRouter/send(_:)-([APNsSubmission])``
/// together with others: the request, its environment and its completion, which runs exactly once as for a single
/// ``APNsClient/send(_:environment:completion:)``.
public struct APNsSubmission: Sendable {
    public let request: APNsRequest
    public let environment: APNsEnvironment
    public let completion: @Sendable (APNsResult) -> Void

    public init(request: APNsRequest, environment: APNsEnvironment, completion: @escaping @Sendable (APNsResult) -> Void) {
        self.request = request
        self.environment = environment
        self.completion = completion
    }
}
